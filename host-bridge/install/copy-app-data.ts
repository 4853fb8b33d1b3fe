// Copies an app's data/ for an update (UPD-04) or a keep-data uninstall (UNIN-06): every
// SQLite database through SQLite's online backup API, as one file with no -wal or -shm beside
// it (the log's pages are folded in), every other regular file byte for byte (a run of zeros
// left a hole, so a sparse file stays sparse), links recreated
// as the same links (never followed: a link the app planted could name any file of the owner),
// and nothing else (sockets, fifos, devices are skipped). The source is never written.
//
// The app may still be writing data/ while it is copied (an MCP server outlives its backend's
// stop), so a name checked as a plain file or folder may be a link by the time it is read. Every
// folder and file is therefore read from one descriptor opened without following a link, and
// only when the kernel says that descriptor is the one at the expected path (/proc/self/fd);
// the names in a folder are reached through its descriptor. A folder on the way swapped for a
// link leads elsewhere and the copy stops with data_changed_during_copy. A
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
const ZEROS = Buffer.alloc(COPY_CHUNK);

/**
 * Copies the regular file opened at `source` (`/proc/self/fd/<folder>/<name>`, see walk) to
 * `to`, created new: read from one descriptor opened without following a link, which the kernel
 * confirms is the file at `expected`. Throws DataChangedDuringCopy otherwise. It copies the size
 * the file had when it was opened, and a chunk of zeros is left a hole: a file the app made
 * sparse (one truncate to a terabyte) stays sparse instead of filling the owner's disk.
 */
async function copyFileAt(source: string, expected: string, to: string, name: string): Promise<void> {
  let input;
  try {
    input = await open(source, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    throw new DataChangedDuringCopy(name); // ELOOP: now a link; ENOENT: removed
  }
  try {
    const st = await input.stat();
    if (openedPath(input.fd) !== expected || !st.isFile()) throw new DataChangedDuringCopy(name);
    const output = await open(to, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
    try {
      const buf = Buffer.allocUnsafe(COPY_CHUNK);
      let position = 0;
      while (position < st.size) {
        const { bytesRead } = await input.read(buf, 0, Math.min(COPY_CHUNK, st.size - position), position);
        if (bytesRead === 0) break; // it shrank meanwhile
        if (!buf.subarray(0, bytesRead).equals(ZEROS.subarray(0, bytesRead)))
          await output.write(buf, 0, bytesRead, position);
        position += bytesRead;
      }
      await output.truncate(position);
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
    // The folder is read through one descriptor the kernel says is `from` itself, and every name
    // in it through that descriptor (/proc/self/fd/<fd>/<name>), never through `from` again: a
    // folder on the way swapped for a link leads nowhere but to data_changed_during_copy.
    const folder = await open(from, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW).catch(
      changed(rel),
    );
    try {
      if (openedPath(folder.fd) !== from) throw new DataChangedDuringCopy(rel);
      const at = `/proc/self/fd/${folder.fd}`;
      const entries = (await readdir(at).catch(changed(rel))).sort();
      for (const entry of entries) {
        if (await isSqliteDatabase(join(at, entry))) databases.add(join(from, entry));
      }
      for (const entry of entries) {
        const path = join(from, entry);
        const pinned = join(at, entry);
        const target = join(to, entry);
        const name = rel ? `${rel}/${entry}` : entry;
        // A database's log is read with the database (below), never copied or linked beside it.
        if (SQLITE_COMPANION.test(entry) && databases.has(path.replace(SQLITE_COMPANION, ""))) continue;
        const st = await lstat(pinned).catch(changed(name));
        if (st.isSymbolicLink()) {
          await symlink(await readlink(pinned).catch(changed(name)), target);
          report.links += 1;
        } else if (st.isDirectory()) {
          await walk(path, target, name);
        } else if (!st.isFile()) {
          report.skipped.push(name);
        } else if (databases.has(path)) {
          const snapshot = join(snapshots, String(report.databases.length));
          await mkdir(snapshot, { mode: 0o700 });
          await copyFileAt(pinned, path, join(snapshot, "db"), name);
          // Its log holds committed pages the file may not have yet; a -shm is rebuilt from it.
          for (const log of ["-wal", "-journal"]) {
            if ((await lstat(`${pinned}${log}`).catch(() => null))?.isFile())
              await copyFileAt(`${pinned}${log}`, `${path}${log}`, join(snapshot, `db${log}`), `${name}${log}`);
          }
          await backupDatabase(join(snapshot, "db"), target);
          report.databases.push(name);
        } else {
          await copyFileAt(pinned, path, target, name);
          report.files += 1;
        }
      }
    } finally {
      await folder.close();
    }
  };
  try {
    await walk(root, toDir, "");
  } finally {
    await rm(snapshots, { recursive: true, force: true });
  }
  return report;
}
