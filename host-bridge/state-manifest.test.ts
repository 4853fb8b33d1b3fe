import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { STORE_IDENTITY_CLAIM, STORE_IDENTITY_SCHEMA } from "../kernel/contracts/store-identity";
import { findStateLoss, readStateManifest, writeStateManifest } from "./state-manifest";

const homes: string[] = [];
afterEach(() => homes.splice(0).forEach((home) => rmSync(home, { recursive: true, force: true })));

function store(home: string, namespace: string, id: string, rows: number): string {
  mkdirSync(join(home, "state", namespace), { recursive: true });
  const file = join(home, "state", namespace, "a.sqlite");
  const db = new Database(file);
  db.exec(STORE_IDENTITY_SCHEMA);
  db.prepare(STORE_IDENTITY_CLAIM).run(id, "2025-01-01T00:00:00.000Z");
  db.exec("CREATE TABLE IF NOT EXISTS t (x)");
  for (let i = 0; i < rows; i++) db.prepare("INSERT INTO t VALUES (?)").run(i);
  db.close();
  return file;
}

describe("the state manifest", () => {
  it("notices a store that is missing, emptied or replaced, and nothing else", () => {
    const home = mkdtempSync(join(tmpdir(), "pc-manifest-"));
    homes.push(home);
    const file = store(home, "ns", "id-1", 3);
    const manifest = writeStateManifest(home, join(home, "state"), ["ns"], null);
    expect(readStateManifest(home)).toEqual(manifest);
    expect(manifest.stores["ns/a.sqlite"]).toEqual({ storeId: "id-1", rows: 3 });
    expect(findStateLoss(manifest, join(home, "state"), ["ns"])).toEqual([]);

    rmSync(file);
    expect(findStateLoss(manifest, join(home, "state"), ["ns"])).toEqual([
      { store: "ns/a.sqlite", what: "missing", knownRows: 3 },
    ]);
    store(home, "ns", "id-2", 5);
    expect(findStateLoss(manifest, join(home, "state"), ["ns"])).toEqual([
      { store: "ns/a.sqlite", what: "replaced", knownRows: 3 },
    ]);
    rmSync(file);
    store(home, "ns", "id-1", 0);
    expect(findStateLoss(manifest, join(home, "state"), ["ns"])).toEqual([
      { store: "ns/a.sqlite", what: "empty", knownRows: 3 },
    ]);
    expect(findStateLoss(null, join(home, "state"), ["ns"])).toEqual([]);
  });
});
