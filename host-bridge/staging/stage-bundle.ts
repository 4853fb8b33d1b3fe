// Stages a bundle into quarantine from its one survey (INST-02/03). Files are opened without
// following links and checked against the survey, so a file swapped or rewritten after the
// survey fails the copy instead of bringing in bytes nobody judged. On any refusal the partial
// copy is removed; nothing is ever written outside the quarantine root. Each file is hashed from
// the very bytes written to its staged copy, so the consent listing needs no second read.
//
// Each file is copied with synchronous calls, one file after another, and the event loop is let
// run between every few files. For 10 000 small files in the page cache a round trip through
// the thread pool cost the main thread more than the system calls themselves (about 35% more
// CPU in all, and more wall time on two shared CPUs); a large file (up to the survey's cap)
// holds the loop for as long as its own copy takes.
import { createHash, randomBytes } from "node:crypto";
import * as fs from "node:fs";
import { mkdir, rm, symlink, chmod } from "node:fs/promises";
import path from "node:path";
import { refuse, type Refusal } from "./refusal";
import { nextTurn } from "./next-turn";
import { openedPath } from "../opened-path";
import { DEFAULT_STAGING_CAPS, surveyTree, type StagingCaps, type Survey, type SurveyEntry } from "./survey-tree";

export interface StagedEntry {
  path: string;
  type: "file" | "dir" | "link";
  /** The installed mode: 0o755 for folders and executable files, 0o644 for other files. */
  mode: number;
  size: number;
  linkTarget?: string;
  /** For files: sha256 (hex) of exactly the bytes written to the staged copy. */
  sha256?: string;
}

export interface StageOptions {
  caps?: Partial<StagingCaps>;
  /** Test hook: runs between the survey and the copy, to prove a swap in that window is caught. */
  afterSurvey?: (survey: Survey) => void | Promise<void>;
  /**
   * Shown each staged file of at most `showUpToBytes`, with exactly the bytes written to it (or,
   * reading without a copy, read from it), once the read has been checked against the survey: a
   * reader of the tree (the scan, the manifest) takes them instead of reading the file back. A
   * throw refuses the staging as a failed copy would.
   */
  onFileStaged?: (entry: StagedEntry, bytes: Buffer) => void;
  /** The largest file onFileStaged is shown (default SHOWN_UP_TO_BYTES); one read this whole is held in memory. */
  showUpToBytes?: number;
}

export type StageResult = { ok: true; id: string; dir: string; entries: StagedEntry[]; omitted: string[] } | Refusal;
export type ReadResult = { ok: true; entries: StagedEntry[]; omitted: string[] } | Refusal;

/**
 * Setuid/setgid/sticky and group/world write are dropped; only the executable class survives,
 * so an app cannot plant a privilege bit or a file another user could rewrite.
 */
export function normalisedMode(entry: Pick<SurveyEntry, "type" | "mode">): number {
  if (entry.type === "dir") return 0o755;
  if (entry.type === "link") return 0o777;
  return (entry.mode & 0o111) !== 0 ? 0o755 : 0o644;
}

const COPY_CHUNK = 1024 * 1024;
/** A file this small is read whole into one buffer, which onFileStaged is shown. */
export const SHOWN_UP_TO_BYTES = COPY_CHUNK;
// O_NONBLOCK: if a file was swapped for a pipe after the survey, open must not hang on it.
const SOURCE_OPEN_FLAGS = fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK;
const DEST_OPEN_FLAGS = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW;

/**
 * How much copying one turn of the event loop does at most: 32 files or 4 MiB, whichever comes
 * first, and a larger file yields after each chunk. The bridge's other work (health watches,
 * the gateway's calls, log relays) then waits a few milliseconds at most, whatever the bundle.
 */
const FILES_PER_TURN = 32;
const BYTES_PER_TURN = 4 * COPY_CHUNK;

/** Writes all of `bytes`: a write may take fewer bytes than it was given. */
function writeAll(output: number, bytes: Buffer): void {
  for (let done = 0; done < bytes.length;) done += fs.writeSync(output, bytes, done, bytes.length - done, null);
}

/**
 * Copies one surveyed file to `dest` (or, with none, only reads it) and answers the sha256 of
 * the bytes it read and wrote, and for a file of at most `showUpTo` bytes those bytes; refuses if
 * what is opened is not the file the survey saw, or if it changed while being read.
 */
async function copySurveyedFile(
  src: string,
  dest: string | null,
  entry: SurveyEntry,
  showUpTo: number,
): Promise<{ sha256: string; bytes: Buffer | null } | Refusal> {
  const changed = () => refuse("bundle_changed_during_copy", { path: entry.path });
  let input: number;
  try {
    input = fs.openSync(src, SOURCE_OPEN_FLAGS);
  } catch {
    return changed(); // ELOOP: now a link; ENOENT: removed; ENXIO: now a socket
  }
  try {
    const before = fs.fstatSync(input, { bigint: true });
    const sameAsSurvey =
      // The kernel's name for what it opened: a folder on the way swapped for a link since the
      // survey (which read that folder through the link) leads out of the bundle.
      openedPath(input) === src &&
      before.isFile() &&
      before.dev.toString() === entry.dev &&
      before.ino.toString() === entry.ino &&
      Number(before.size) === entry.size &&
      before.mtimeNs.toString() === entry.mtimeNs;
    if (!sameAsSurvey) return changed();

    const output = dest === null ? null : fs.openSync(dest, DEST_OPEN_FLAGS, 0o600);
    try {
      const hash = createHash("sha256");
      // A file shown fills one buffer, one byte longer than the survey's size so that a file
      // grown since still shows; a larger one goes through a reused chunk. Either is read a chunk
      // at a time, and a file of more than one chunk lets the event loop run after each.
      const whole = entry.size <= showUpTo;
      const buf = Buffer.allocUnsafe(whole ? entry.size + 1 : COPY_CHUNK);
      let copied = 0;
      for (;;) {
        const at = whole ? copied : 0;
        const wanted = Math.min(buf.length - at, COPY_CHUNK);
        const bytesRead = fs.readSync(input, buf, at, wanted, null);
        if (bytesRead === 0) break;
        copied += bytesRead;
        if (copied > entry.size) return changed(); // grew while we read it
        const chunk = buf.subarray(at, at + bytesRead);
        if (output !== null) writeAll(output, chunk);
        hash.update(chunk); // the bytes just written, unchanged: buf is refilled only by the next read
        // A regular file's read comes up short only at its end.
        if (bytesRead < wanted) break;
        if (entry.size > COPY_CHUNK) await nextTurn();
      }
      const after = fs.fstatSync(input, { bigint: true });
      // The change time moves with every write and every utimes, and no one can set it back:
      // a file rewritten in place at its size with its mtime restored is still caught.
      if (
        copied !== entry.size ||
        after.mtimeNs.toString() !== entry.mtimeNs ||
        after.ctimeNs !== before.ctimeNs ||
        Number(after.size) !== entry.size
      )
        return changed();
      if (output !== null) fs.fchmodSync(output, normalisedMode(entry));
      return { sha256: hash.digest("hex"), bytes: whole ? buf.subarray(0, copied) : null };
    } finally {
      if (output !== null) fs.closeSync(output);
    }
  } finally {
    fs.closeSync(input);
  }
}

/** Stages `source` into `<quarantineRoot>/<random id>/` from one survey, or refuses naming the path. */
export async function stageBundle(
  source: string,
  quarantineRoot: string,
  opts: StageOptions = {},
): Promise<StageResult> {
  const surveyed = await surveyTree(source, { ...DEFAULT_STAGING_CAPS, ...opts.caps });
  if (!surveyed.ok) return surveyed;
  const survey = surveyed.survey;

  const quarantine = path.resolve(quarantineRoot);
  // A quarantine inside the bundle would make the copy part of what it copies.
  if (quarantine === survey.root || quarantine.startsWith(survey.root + path.sep)) {
    return refuse("bundle_source_invalid", { reason: "the quarantine folder is inside the bundle" });
  }
  await opts.afterSurvey?.(survey);

  await mkdir(quarantine, { recursive: true, mode: 0o700 });
  const id = randomBytes(16).toString("hex");
  const dir = path.join(quarantine, id);
  await mkdir(dir, { mode: 0o700 }); // not recursive: an existing id is a failure, never shared

  let staged = false;
  try {
    const read = await readSurveyed(survey, dir, opts);
    if (!read.ok) return read;
    staged = true;
    return { ok: true, id, dir, entries: read.entries, omitted: read.omitted };
  } finally {
    if (!staged) await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Reads `source` from one survey exactly as stageBundle copies it (every file opened without
 * following links, checked against the survey and hashed from the bytes read, each refusal the
 * same) and writes nothing: for a review that keeps no copy. Install stages its own.
 */
export async function readBundle(source: string, opts: StageOptions = {}): Promise<ReadResult> {
  const surveyed = await surveyTree(source, { ...DEFAULT_STAGING_CAPS, ...opts.caps });
  if (!surveyed.ok) return surveyed;
  await opts.afterSurvey?.(surveyed.survey);
  return readSurveyed(surveyed.survey, null, opts);
}

/** Reads every surveyed entry, copying it into `dir` when one is given (folders first). */
async function readSurveyed(survey: Survey, dir: string | null, opts: StageOptions): Promise<ReadResult> {
  const showUpTo = opts.showUpToBytes ?? SHOWN_UP_TO_BYTES;
  const entries: StagedEntry[] = survey.entries.map((entry) => {
    const out: StagedEntry = { path: entry.path, type: entry.type, mode: normalisedMode(entry), size: entry.size };
    if (entry.linkTarget !== undefined) out.linkTarget = entry.linkTarget;
    return out;
  });
  const destOf = (entry: SurveyEntry) => (dir === null ? null : path.join(dir, ...entry.path.split("/")));
  const folders: string[] = dir === null ? [] : [dir];
  // Folders first, in pre-order (parents before what they hold).
  for (const entry of survey.entries) {
    const dest = destOf(entry);
    if (entry.type !== "dir" || dest === null) continue;
    await mkdir(dest, { mode: 0o700 });
    folders.push(dest);
  }
  // Files and links in survey order: the first refusal is the one returned.
  let filesThisTurn = 0;
  let bytesThisTurn = 0;
  for (const [index, entry] of survey.entries.entries()) {
    if (entry.type === "dir") continue;
    if (filesThisTurn >= FILES_PER_TURN || bytesThisTurn >= BYTES_PER_TURN) {
      await nextTurn();
      filesThisTurn = 0;
      bytesThisTurn = 0;
    }
    filesThisTurn++;
    bytesThisTurn += entry.size;
    const dest = destOf(entry);
    if (entry.type === "link") {
      // Recreated as the same relative link; the survey proved it names a bundle file.
      if (dest !== null) await symlink(entry.linkTarget!, dest);
      continue;
    }
    const copied = await copySurveyedFile(path.join(survey.root, ...entry.path.split("/")), dest, entry, showUpTo);
    if ("ok" in copied) return copied;
    const staged = entries[index]!;
    staged.sha256 = copied.sha256;
    if (copied.bytes !== null) opts.onFileStaged?.(staged, copied.bytes);
  }
  for (const folder of folders) await chmod(folder, 0o755);
  return { ok: true, entries, omitted: survey.omitted };
}
