import { afterAll, describe, expect, it } from "vitest";
import { existsSync, lstatSync, readFileSync, readlinkSync } from "node:fs";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { copyAppData } from "./copy-app-data";

const roots: string[] = [];
afterAll(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

describe("copyAppData", () => {
  it("copies a database a writer still holds open in WAL mode as one file with every committed row, and leaves the source as it was", async () => {
    const root = await mkdtemp(join(tmpdir(), "pc-copy-data-"));
    roots.push(root);
    const from = join(root, "data");
    await mkdir(join(from, "sub"), { recursive: true });
    const writer = new Database(join(from, "app.db"));
    writer.pragma("journal_mode = WAL");
    writer.pragma("wal_autocheckpoint = 0");
    writer.exec("CREATE TABLE rows (n INTEGER)");
    const insert = writer.prepare("INSERT INTO rows (n) VALUES (?)");
    for (let n = 1; n <= 500; n += 1) insert.run(n);
    expect(existsSync(join(from, "app.db-wal"))).toBe(true);
    await writeFile(join(from, "sub", "notes.txt"), "plain file");
    await symlink("/etc/passwd", join(from, "planted"));

    const report = await copyAppData(from, join(root, "copy"));
    writer.close();

    expect(report.databases).toEqual(["app.db"]);
    expect(existsSync(join(root, "copy", "app.db-wal"))).toBe(false);
    expect(existsSync(join(root, "copy", "app.db-shm"))).toBe(false);
    const copy = new Database(join(root, "copy", "app.db"), { readonly: true });
    expect(copy.prepare("SELECT COUNT(*) AS c, MAX(n) AS m FROM rows").get()).toEqual({ c: 500, m: 500 });
    copy.close();
    expect(readFileSync(join(root, "copy", "sub", "notes.txt"), "utf8")).toBe("plain file");
    // A link is copied as the same link, never as the file it names.
    expect(lstatSync(join(root, "copy", "planted")).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(root, "copy", "planted"))).toBe("/etc/passwd");
  });
});
