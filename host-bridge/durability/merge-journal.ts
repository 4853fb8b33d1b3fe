// The journal of a merge restore (<home>/run/restore-merge.json, 0600): the apps whose archived
// folders it is about to move into apps/, written before the first move and removed once the
// gateway has answered for their records. A merge killed in between leaves folders without a
// record; the next merge removes those (never a folder whose record came), so a kill at any step
// leaves every app either absent or merged whole.
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { APP_NAME_PATTERN } from "../../kernel/rules/app-name";
import { homePaths } from "../home";
import { makePrivateFolder, removePrivateFile, writePrivateFile } from "../private-file";
import { readPrivateRecord } from "../private-record";

const MergeJournalSchema = z.strictObject({
  version: z.literal(1),
  pid: z.number().int(),
  placed: z.array(z.string().regex(APP_NAME_PATTERN)),
});

export function mergeJournalPath(home: string): string {
  return join(homePaths(home).run, "restore-merge.json");
}

export function writeMergeJournal(home: string, placed: readonly string[]): void {
  makePrivateFolder(homePaths(home).run);
  writePrivateFile(mergeJournalPath(home), `${JSON.stringify({ version: 1, pid: process.pid, placed })}\n`);
}

export function clearMergeJournal(home: string): void {
  removePrivateFile(mergeJournalPath(home));
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Settles a merge a kill interrupted: each folder it placed whose app has no record is removed.
 * Answers the removed names, or `in_progress` while the merge that wrote the journal still runs.
 */
export async function settleMerge(
  home: string,
  hasRecord: (name: string) => boolean,
): Promise<string[] | "in_progress"> {
  const path = mergeJournalPath(home);
  if (!existsSync(path)) return [];
  const journal = readPrivateRecord(path, MergeJournalSchema);
  if (journal !== null && journal.pid !== process.pid && isAlive(journal.pid)) return "in_progress";
  const removed: string[] = [];
  for (const name of journal?.placed ?? []) {
    if (hasRecord(name)) continue;
    const folder = join(homePaths(home).apps, name);
    if (!existsSync(folder)) continue;
    await rm(folder, { recursive: true, force: true });
    removed.push(name);
  }
  removePrivateFile(path);
  return removed;
}
