import { afterAll, describe, expect, it } from "vitest";
import {
  closeSync,
  existsSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  readSync,
  statSync,
} from "node:fs";
import { mkdir, mkdtemp, open, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { spawn } from "node:child_process";
import { copyAppData, DataChangedDuringCopy } from "./copy-app-data";

const roots: string[] = [];
afterAll(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

/** Every regular file's text under `dir`, by relative path. */
function textsUnder(dir: string, rel = ""): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(dir, rel))) {
    const path = join(dir, rel, name);
    const st = lstatSync(path);
    if (st.isDirectory()) out.push(...textsUnder(dir, join(rel, name)));
    else if (st.isFile()) out.push(readFileSync(path, "utf8"));
  }
  return out;
}

describe("copyAppData", () => {
  it("never copies a file a link leads to, while the app flips a folder of data/ to a link and back during the copy", async () => {
    const root = await mkdtemp(join(tmpdir(), "pc-data-race-"));
    roots.push(root);
    const outside = join(root, "owner-files");
    await mkdir(outside);
    await writeFile(join(outside, "note.txt"), "OWNER-PRIVATE");
    await writeFile(join(outside, "app.db"), "OWNER-PRIVATE");
    const data = join(root, "data");
    await mkdir(join(data, "sub"), { recursive: true });
    await writeFile(join(data, "sub", "note.txt"), "the app's own");
    await writeFile(join(data, "top.txt"), "the app's own");
    // The app's writer: `sub` is its folder, then a link to the owner's folder, then its folder again.
    const flipper = spawn(
      "python3",
      [
        "-c",
        "import os,sys\nos.chdir(sys.argv[1])\nwhile True:\n  os.rename('sub','sub.real'); os.symlink(sys.argv[2],'sub'); os.unlink('sub'); os.rename('sub.real','sub')",
        data,
        outside,
      ],
      { stdio: "ignore" },
    );
    let refused = 0;
    try {
      for (let i = 0; i < 300; i++) {
        const to = join(root, `copy-${i}`);
        try {
          await copyAppData(data, to);
        } catch (error) {
          // Stopping, naming what changed, is the only other answer.
          if (!(error instanceof DataChangedDuringCopy)) throw error;
          refused++;
        }
        if (existsSync(to)) for (const text of textsUnder(to)) expect(text, `copy ${i}`).toBe("the app's own");
      }
    } finally {
      flipper.kill("SIGKILL");
    }
    expect(refused).toBeLessThan(300);
  });

  it("never lists a folder or reads a link a swapped folder leads to: no name or link target of the owner's folder reaches the copy", async () => {
    const root = await mkdtemp(join(tmpdir(), "pc-data-folder-race-"));
    roots.push(root);
    const outside = join(root, "owner-files");
    await mkdir(join(outside, "secret-client-acme"), { recursive: true });
    await symlink("/etc/shadow", join(outside, "owner-link"));
    const data = join(root, "data");
    await mkdir(join(data, "sub"), { recursive: true });
    await symlink("app-target", join(data, "sub", "app-link"));
    // The app's writer swaps `sub` and a link to the owner's folder in one step (renameat2
    // RENAME_EXCHANGE), over and over.
    await symlink(outside, join(data, "sub.link"));
    const flipper = spawn(
      "python3",
      [
        "-c",
        "import ctypes, sys\nlibc = ctypes.CDLL(None)\nwhile True: libc.renameat2(-100, sys.argv[1].encode(), -100, sys.argv[2].encode(), 2)",
        join(data, "sub"),
        join(data, "sub.link"),
      ],
      { stdio: "ignore" },
    );
    const seen = new Set<string>();
    const collect = (dir: string) => {
      for (const name of readdirSync(dir)) {
        seen.add(name);
        const path = join(dir, name);
        const st = lstatSync(path);
        if (st.isSymbolicLink()) seen.add(readlinkSync(path));
        else if (st.isDirectory()) collect(path);
      }
    };
    let copied = 0;
    try {
      for (let i = 0; i < 600; i++) {
        const to = join(root, `copy-${i}`);
        try {
          await copyAppData(data, to);
          copied++;
        } catch (error) {
          if (!(error instanceof DataChangedDuringCopy)) throw error;
        }
        if (existsSync(to)) collect(to);
      }
    } finally {
      flipper.kill("SIGKILL");
    }
    expect(copied).toBeGreaterThan(0);
    expect([...seen].filter((name) => /secret-client|owner-link|shadow/.test(name))).toEqual([]);
  });
});

describe("copyAppData: sparse files and databases still being written", () => {
  it("keeps a sparse file sparse: a file truncated to 1 GiB costs the copy no disk", async () => {
    const root = await mkdtemp(join(tmpdir(), "pc-data-sparse-"));
    roots.push(root);
    const data = join(root, "data");
    await mkdir(data);
    const handle = await open(join(data, "cache.bin"), "w");
    await handle.write("head");
    await handle.truncate(1024 * 1024 * 1024);
    await handle.write("tail", 1024 * 1024 * 1024 - 4);
    await handle.close();
    const to = join(root, "copy");
    await copyAppData(data, to);
    const copy = statSync(join(to, "cache.bin"));
    expect(copy.size).toBe(1024 * 1024 * 1024);
    expect(copy.blocks * 512).toBeLessThan(16 * 1024 * 1024);
    const fd = openSync(join(to, "cache.bin"), "r");
    const ends = Buffer.alloc(4);
    readSync(fd, ends, 0, 4, 0);
    expect(ends.toString()).toBe("head");
    readSync(fd, ends, 0, 4, 1024 * 1024 * 1024 - 4);
    expect(ends.toString()).toBe("tail");
    closeSync(fd);
  });

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
