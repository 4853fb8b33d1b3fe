// Copies an app's data/ for an update (UPD-04) or a keep-data uninstall (UNIN-06): every
// SQLite database through SQLite's online backup API, as one file with no -wal or -shm beside
// it (the log's pages are folded in), every other regular file byte for byte, links recreated
// as the same links (never followed: a link the app planted could name any file of the owner),
// and nothing else (sockets, fifos, devices are skipped). The source is never written.
//
// The app may still be writing data/ while it is copied (an MCP server outlives its backend's
// stop), so a name checked as a plain file or folder may be a link by the time it is read. Every
// file is therefore read from one descriptor opened without following a link, and only when the
// kernel says that descriptor is the file at the expected path (/proc/self/fd): a folder on the
// way swapped for a link leads elsewhere and the copy stops with data_changed_during_copy. A
// database is first copied that way, with its log, into the new data/ (which no app process
// sees yet), and the backup reads that copy.
import { constants } from "node:fs";
import { lstat, mkdir, open, readdir, readlink, realpath, rm, symlink } from "node:fs/promises";
import { join } from "node:path";
import Database from "better-sqlite3";
import { openedPath } from "../opened-path";

const SQLITE_MAGIC = Buffer.from("SQLite format 3\0", "latin1");
// A database's companions: their content is part of the database the backup reads.
const SQLITE_COMPANION = /-(wal|shm|journal)$/;

export interface DataCopyReport {
  databases: string[];
  files: number;
  links: number;
  skipped: string[];
}

/** True when `path` is a regular file that starts with SQLite's header; opened without following a link. */
async function isSqliteDatabase(path: string): Promise<boolean> {
  let fh;
  try {
    fh = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return false;
  }
  try {
    const st = await fh.stat();
    if (!st.isFile() || st.size < 100) return false;
    const head = Buffer.alloc(SQLITE_MAGIC.length);
    await fh.read(head, 0, head.length, 0);
    return head.equals(SQLITE_MAGIC);
  } finally {
    await fh.close();
  }
}

/** Thrown when a name under data/ stopped being the file it was while it was copied. */
export class DataChangedDuringCopy extends Error {
  constructor(readonly path: string) {
    super(`data/${path} changed while it was copied (a link or another file took its place)`);
  }
}

const COPY_CHUNK = 1024 * 1024;

/**
 * Copies the regular file at `from` (which must be that very file, reached by no link) to `to`,
 * created new: read from one descriptor opened without following a link, which the kernel
 * confirms is `from` itself. Throws DataChangedDuringCopy otherwise.
 */
async function copyFileAt(from: string, to: string, name: string): Promise<void> {
  let input;
  try {
    input = await open(from, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    throw new DataChangedDuringCopy(name); // ELOOP: now a link; ENOENT: removed
  }
  try {
    if (openedPath(input.fd) !== from || !(await input.stat()).isFile()) throw new DataChangedDuringCopy(name);
    const output = await open(to, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
    try {
      const buf = Buffer.allocUnsafe(COPY_CHUNK);
      for (;;) {
        const { bytesRead } = await input.read(buf, 0, buf.length, null);
        if (bytesRead === 0) break;
        await output.write(buf, 0, bytesRead);
      }
    } finally {
      await output.close();
    }
  } finally {
    await input.close();
  }
}

/** A name that moves while it is read is the app writing data/: the copy stops, whatever the error. */
function changed(name: string): () => never {
  return () => {
    throw new DataChangedDuringCopy(name);
  };
}

/** One database through the online backup API: a consistent single-file copy even while another process writes it. */
async function backupDatabase(from: string, to: string): Promise<void> {
  const source = new Database(from, { readonly: true, fileMustExist: true });
  try {
    await source.backup(to);
  } finally {
    source.close();
  }
  // The copy is a rollback-journal database of its own: no -wal or -shm is left beside it.
  const copy = new Database(to);
  try {
    copy.pragma("journal_mode = DELETE");
  } finally {
    copy.close();
  }
}

/** Copies the tree at `fromDir` into `toDir` (created 0700); answers what it did. */
export async function copyAppData(fromDir: string, toDir: string): Promise<DataCopyReport> {
  const report: DataCopyReport = { databases: [], files: 0, links: 0, skipped: [] };
  const databases = new Set<string>();
  // Every path below is built on the folder's real path, as /proc/self/fd names what it opened.
  const root = await realpath(fromDir);
  // Where a database and its log are first copied: inside the new data/'s parent, which only
  // the bridge writes, never inside data/ itself.
  const snapshots = `${toDir}.snapshot`;
  await rm(snapshots, { recursive: true, force: true });
  await mkdir(snapshots, { mode: 0o700 });
  const walk = async (from: string, to: string, rel: string) => {
    await mkdir(to, { recursive: true, mode: 0o700 });
    const entries = (await readdir(from).catch(changed(rel))).sort();
    for (const entry of entries) {
      const path = join(from, entry);
      if (await isSqliteDatabase(path)) databases.add(path);
    }
    for (const entry of entries) {
      const path = join(from, entry);
      const target = join(to, entry);
      const name = rel ? `${rel}/${entry}` : entry;
      const st = await lstat(path).catch(changed(name));
      if (st.isSymbolicLink()) {
        await symlink(await readlink(path).catch(changed(name)), target);
        report.links += 1;
      } else if (st.isDirectory()) {
        await walk(path, target, name);
      } else if (!st.isFile()) {
        report.skipped.push(name);
      } else if (databases.has(path)) {
        const snapshot = join(snapshots, String(report.databases.length));
        await mkdir(snapshot, { mode: 0o700 });
        await copyFileAt(path, join(snapshot, "db"), name);
        // Its log holds committed pages the file may not have yet; a -shm is rebuilt from it.
        for (const log of ["-wal", "-journal"]) {
          if ((await lstat(`${path}${log}`).catch(() => null))?.isFile())
            await copyFileAt(`${path}${log}`, join(snapshot, `db${log}`), `${name}${log}`);
        }
        await backupDatabase(join(snapshot, "db"), target);
        report.databases.push(name);
      } else if (SQLITE_COMPANION.test(entry) && databases.has(path.replace(SQLITE_COMPANION, ""))) {
        continue;
      } else {
        await copyFileAt(path, target, name);
        report.files += 1;
      }
    }
  };
  try {
    await walk(root, toDir, "");
  } finally {
    await rm(snapshots, { recursive: true, force: true });
  }
  return report;
}
