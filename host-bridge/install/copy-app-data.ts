// Copies an app's data/ for an update (UPD-04) or a keep-data uninstall (UNIN-06): every
// SQLite database through SQLite's online backup API, as one file with no -wal or -shm beside
// it (the log's pages are folded in), every other regular file byte for byte, links recreated
// as the same links (never followed: a link the app planted could name any file of the owner),
// and nothing else (sockets, fifos, devices are skipped). The source is never written.
import { constants } from "node:fs";
import { copyFile, lstat, mkdir, open, readdir, readlink, symlink } from "node:fs/promises";
import { join } from "node:path";
import Database from "better-sqlite3";

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
  const walk = async (from: string, to: string, rel: string) => {
    await mkdir(to, { recursive: true, mode: 0o700 });
    const entries = (await readdir(from)).sort();
    for (const entry of entries) {
      const path = join(from, entry);
      if (await isSqliteDatabase(path)) databases.add(path);
    }
    for (const entry of entries) {
      const path = join(from, entry);
      const target = join(to, entry);
      const name = rel ? `${rel}/${entry}` : entry;
      const st = await lstat(path);
      if (st.isSymbolicLink()) {
        await symlink(await readlink(path), target);
        report.links += 1;
      } else if (st.isDirectory()) {
        await walk(path, target, name);
      } else if (!st.isFile()) {
        report.skipped.push(name);
      } else if (databases.has(path)) {
        await backupDatabase(path, target);
        report.databases.push(name);
      } else if (SQLITE_COMPANION.test(entry) && databases.has(path.replace(SQLITE_COMPANION, ""))) {
        continue;
      } else {
        await copyFile(path, target, constants.COPYFILE_EXCL);
        report.files += 1;
      }
    }
  };
  await walk(fromDir, toDir, "");
  return report;
}
