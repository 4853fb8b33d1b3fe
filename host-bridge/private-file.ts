// Files only the owner may read (secrets, keys, records), written so that no reader ever sees
// them half-written or with a wider mode, and so that a write the bridge acknowledged survives
// a power cut: a fresh staging file is created 0600 (failing if that name exists), filled,
// flushed to disk (fsync), renamed over the target, and then the folder is flushed, since a
// rename lives in the folder's entries and is otherwise only in the page cache. Rename replaces
// a link planted at the target instead of writing through it, and an existing file's old mode
// never carries over. docs/design/faults.md "The bridge's own files" states the rule.
import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  existsSync,
  fchmodSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";

/** The staging name of a write to `<target>`: `<target>.<12 hex>.tmp`, in the target's folder. */
const STAGING_NAME = /^(.+)\.[0-9a-f]{12}\.tmp$/;

/** A staging file younger than this may be a write in flight (another process of the home): never swept. */
const STAGING_SWEEP_AGE_MS = 60_000;

/**
 * Writes `content` to `path`, readable by the owner only, durably: when this returns, the bytes
 * and the name are on disk. Throws on failure, leaving no staging file.
 */
export function writePrivateFile(path: string, content: string | Buffer): void {
  const staging = `${path}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    const fd = openSync(
      staging,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o600,
    );
    try {
      const bytes = typeof content === "string" ? Buffer.from(content, "utf8") : content;
      for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at, bytes.length - at);
      fchmodSync(fd, 0o600); // the umask cannot widen it, but a 0600 we did not check is a guess
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(staging, path);
  } catch (error) {
    rmSync(staging, { force: true });
    throw error;
  }
  syncFolder(dirname(path));
}

/**
 * Removes the file `path` durably (a secret the owner deleted does not come back after a power
 * cut); answers whether there was one.
 */
export function removePrivateFile(path: string): boolean {
  if (lstatSync(path, { throwIfNoEntry: false }) === undefined) return false;
  rmSync(path, { force: true });
  syncFolder(dirname(path));
  return true;
}

/**
 * Makes `dir` and any missing parent (0700) durably: each folder made is flushed into its
 * parent's entries, so a file written into it later is not lost with its folder.
 */
export function makePrivateFolder(dir: string): void {
  const missing: string[] = [];
  for (let at = resolve(dir); !existsSync(at); at = dirname(at)) missing.unshift(at);
  if (missing.length === 0) return;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const made of missing) syncFolder(dirname(made));
}

/**
 * Flushes a folder's entries (a rename, a new or removed name in it) to disk. A filesystem that
 * cannot flush a folder (EINVAL, ENOTSUP: some network and FUSE mounts) has nothing more to give.
 */
export function syncFolder(dir: string): void {
  const fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    fsyncSync(fd);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EINVAL" && code !== "ENOTSUP") throw error;
  } finally {
    closeSync(fd);
  }
}

/**
 * Removes the staging files writePrivateFile left in `dir` when it was killed between creating
 * and renaming one (older than a minute, so a write in flight in another process is never cut).
 * `targets`, when given, limits the sweep to staging files of those names: a folder holding an
 * app's own bytes keeps every file the app shipped. Answers the names removed.
 */
export function sweepStagingFiles(dir: string, targets?: readonly string[], now = Date.now()): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return []; // no such folder yet
  }
  const removed: string[] = [];
  for (const name of entries) {
    const target = STAGING_NAME.exec(name)?.[1];
    if (target === undefined || (targets !== undefined && !targets.includes(target))) continue;
    const st = lstatSync(join(dir, name), { throwIfNoEntry: false });
    if (!st?.isFile() || now - st.mtimeMs < STAGING_SWEEP_AGE_MS) continue;
    rmSync(join(dir, name), { force: true });
    removed.push(name);
  }
  if (removed.length > 0) syncFolder(dir);
  return removed;
}
