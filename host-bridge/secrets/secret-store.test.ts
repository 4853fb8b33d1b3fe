import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SecretStore, secretStorePaths } from "./secret-store";

const VALUE = "sk-live-4f9a2c7e1b8d3f6a";
const holder = { app: "holder", digest: "sha256:aaaa" };
const other = { app: "other", digest: "sha256:bbbb" };

function allFileBytes(dir: string): string {
  let out = "";
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) out += readFileSync(join(entry.parentPath, entry.name), "latin1");
  }
  return out;
}

describe("SecretStore", () => {
  let home: string;
  let store: SecretStore;
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), "pc-secrets-"));
    store = new SecretStore(secretStorePaths(home));
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it("seals a value at rest: no file holds it, the key and sealed files are owner-only", () => {
    expect(store.put("API_KEY", VALUE, [])).toEqual({ replaced: false, resealed: 0 });
    expect(allFileBytes(home)).not.toContain(VALUE);
    expect(allFileBytes(home)).not.toContain(Buffer.from(VALUE).toString("base64"));
    expect(statSync(join(home, "secrets.key")).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, "secrets", "store", "API_KEY.json")).mode & 0o777).toBe(0o600);
  });

  it("opens an assigned copy only for the app and consent digest it was sealed for", () => {
    store.put("API_KEY", VALUE, []);
    store.assign("API_KEY", "API_KEY", holder);
    expect(store.openAppSecrets(holder, ["API_KEY"])).toEqual({ env: { API_KEY: VALUE }, refused: [] });
    // The same app after an install with other bytes: the copy does not open.
    expect(store.openAppSecrets({ app: "holder", digest: "sha256:cccc" }, ["API_KEY"])).toEqual({
      env: {},
      refused: ["API_KEY"],
    });
    // Copied into another app's slot: it does not open there either.
    mkdirSync(join(home, "secrets", "apps", "other"), { recursive: true });
    copyFileSync(
      join(home, "secrets", "apps", "holder", "API_KEY.json"),
      join(home, "secrets", "apps", "other", "API_KEY.json"),
    );
    expect(store.openAppSecrets(other, ["API_KEY"])).toEqual({ env: {}, refused: ["API_KEY"] });
    // A copy under another variable name of the same app does not open either.
    copyFileSync(
      join(home, "secrets", "apps", "holder", "API_KEY.json"),
      join(home, "secrets", "apps", "holder", "OTHER.json"),
    );
    expect(store.openAppSecrets(holder, ["OTHER"]).refused).toEqual(["OTHER"]);
  });

  it("an altered sealed file is refused, never half-opened", () => {
    store.put("API_KEY", VALUE, []);
    store.assign("API_KEY", "API_KEY", holder);
    const slot = join(home, "secrets", "apps", "holder", "API_KEY.json");
    const file = JSON.parse(readFileSync(slot, "utf8"));
    const bytes = Buffer.from(file.sealed, "base64");
    bytes[0] ^= 1;
    writeFileSync(slot, JSON.stringify({ ...file, sealed: bytes.toString("base64") }));
    expect(store.openAppSecrets(holder, ["API_KEY"])).toEqual({ env: {}, refused: ["API_KEY"] });
  });

  it("lists names and consumers, never a value; a replaced value reaches every assigned app; delete takes every copy back", () => {
    store.put("API_KEY", VALUE, []);
    store.assign("API_KEY", "WEATHER", holder);
    expect(JSON.stringify(store.list())).not.toContain(VALUE);
    expect(store.list()).toEqual({
      secrets: [{ name: "API_KEY", stored: true, used_by: [{ app: "holder", as: "WEATHER" }] }],
    });
    expect(store.put("API_KEY", "second-value-123", [holder])).toEqual({ replaced: true, resealed: 1 });
    expect(store.openAppSecrets(holder, ["WEATHER"]).env).toEqual({ WEATHER: "second-value-123" });
    expect(store.delete("API_KEY")).toEqual({ deleted: true, unassigned: [{ app: "holder", as: "WEATHER" }] });
    expect(store.openAppSecrets(holder, ["WEATHER"])).toEqual({ env: {}, refused: [] });
    expect(store.list()).toEqual({ secrets: [] });
  });

  it("an update the owner consented to rebinds the copies the new manifest still declares and drops the rest", () => {
    store.put("A", "value-of-a-123", []);
    store.put("B", "value-of-b-456", []);
    store.assign("A", "A", holder);
    store.assign("B", "B", holder);
    expect(store.rebind("holder", holder.digest, "sha256:new", ["A"])).toEqual({ rebound: ["A"], dropped: ["B"] });
    expect(store.openAppSecrets({ app: "holder", digest: "sha256:new" }, ["A", "B"])).toEqual({
      env: { A: "value-of-a-123" },
      refused: [],
    });
  });

  it("a rebind repeated by a settlement keeps the copy it already moved to the new digest", () => {
    // The request that rebound died before the update's journal went: the settlement rebinds again.
    store.put("A", "value-of-a-123", []);
    store.assign("A", "A", holder);
    expect(store.rebind("holder", holder.digest, "sha256:new", ["A"])).toEqual({ rebound: ["A"], dropped: [] });
    expect(store.rebind("holder", holder.digest, "sha256:new", ["A"])).toEqual({ rebound: ["A"], dropped: [] });
    expect(store.openAppSecrets({ app: "holder", digest: "sha256:new" }, ["A"])).toEqual({
      env: { A: "value-of-a-123" },
      refused: [],
    });
  });

  it("refuses to replace a lost key while sealed values remain", () => {
    store.put("API_KEY", VALUE, []);
    rmSync(join(home, "secrets.key"));
    expect(() => new SecretStore(secretStorePaths(home)).put("OTHER", "x-value-123", [])).toThrow(
      /missing but sealed secrets remain/,
    );
  });
});
