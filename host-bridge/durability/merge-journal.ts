// The journal of a merge restore (<home>/run/restore-merge.json, 0600): the apps whose archived
// folders it is about to move into apps/, written before the first move, and the merged apps
// whose secrets are still to be handed out, each taken off once all of its secrets are given and
// it restarted with them. A merge killed between a move and the gateway's answer leaves folders
// without a record; the next merge removes those (never a folder whose record came). A merge
// killed while handing out secrets leaves apps owed them; the next merge hands them out (a
// secret already copied is kept and given again), so a kill at any step leaves every app either
// absent or merged whole, and a re-run completes what was owed. The writer is named by pid and
// start time (journal-writer.ts).
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { APP_NAME_PATTERN } from "../../kernel/rules/app-name";
import { homePaths } from "../home";
import { makePrivateFolder, removePrivateFile, writePrivateFile } from "../private-file";
import { readPrivateRecord } from "../private-record";
import { isOtherWriterAlive, JournalWriterShape, thisJournalWriter } from "./journal-writer";
import { dropPendingPackages } from "./restore-packages";

const MergeJournalSchema = z.strictObject({
  version: z.literal(1),
  ...JournalWriterShape,
  placed: z.array(z.string().regex(APP_NAME_PATTERN)),
  /** Merged apps whose archived secrets are not all handed out yet. */
  secrets: z.array(z.string().regex(APP_NAME_PATTERN)).optional(),
});

export function mergeJournalPath(home: string): string {
  return join(homePaths(home).run, "restore-merge.json");
}

export function writeMergeJournal(home: string, placed: readonly string[], secrets: readonly string[] = []): void {
  makePrivateFolder(homePaths(home).run);
  const journal = { version: 1, ...thisJournalWriter(), placed, secrets };
  writePrivateFile(mergeJournalPath(home), `${JSON.stringify(journal)}\n`);
}

export function clearMergeJournal(home: string): void {
  removePrivateFile(mergeJournalPath(home));
}

/** What settling an interrupted merge found: the folders removed, and the apps still owed their secrets. */
export interface SettledMerge {
  removed: string[];
  secretsOwed: string[];
}

/**
 * Settles a merge a kill interrupted: each folder it placed whose app has no record is removed,
 * and taken off the packages list.
 * Answers the removed names and the recorded apps still owed their secrets (the journal stays
 * until the caller writes its own, which carries them), or `in_progress` while the merge that
 * wrote the journal still runs.
 */
export async function settleMerge(
  home: string,
  hasRecord: (name: string) => boolean,
): Promise<SettledMerge | "in_progress"> {
  const path = mergeJournalPath(home);
  if (!existsSync(path)) return { removed: [], secretsOwed: [] };
  const journal = readPrivateRecord(path, MergeJournalSchema);
  if (journal !== null && isOtherWriterAlive(journal)) return "in_progress";
  const removed: string[] = [];
  for (const name of journal?.placed ?? []) {
    if (hasRecord(name)) continue;
    // Listed as owed packages before its folder moved in: without a record it owes nothing, or a
    // later install of the name would be held back.
    dropPendingPackages(home, name);
    const folder = join(homePaths(home).apps, name);
    if (!existsSync(folder)) continue;
    await rm(folder, { recursive: true, force: true });
    removed.push(name);
  }
  return { removed, secretsOwed: (journal?.secrets ?? []).filter(hasRecord) };
}
