// The journal of a replace restore (docs/backup-and-restore.md, "Crash safety"). The new home is
// built whole in a sibling folder, then two renames swap it in: the home aside, the new one in
// its place. The journal lies beside the home (the home itself is what moves) and names the
// phase; whatever kill interrupts a restore, the next `personalclaw start` or `restore` reads
// it and leaves the home as it was (the build had not finished) or completely restored (the
// swap had begun), never in between.
import { existsSync } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { z } from "zod";
import { removePrivateFile, syncFolder, writePrivateFile } from "../private-file";
import { readPrivateRecord } from "../private-record";
import { isOtherWriterAlive, JournalWriterShape } from "./journal-writer";

export const RestoreJournalSchema = z.strictObject({
  version: z.literal(1),
  phase: z.enum(["build", "swap", "finish"]),
  home: z.string(),
  staged: z.string(),
  previous: z.string(),
  /** The restoring process (pid and start time): while it lives, nobody else settles its journal. */
  ...JournalWriterShape,
});
export type RestoreJournal = z.input<typeof RestoreJournalSchema>;

/** Beside the home: `<parent>/.<home name>.restore.json`. */
export function restoreJournalPath(home: string): string {
  return join(dirname(home), `.${basename(home)}.restore.json`);
}

export function restoreFolders(home: string, id: string): { staged: string; previous: string } {
  return {
    staged: join(dirname(home), `.${basename(home)}.restore-${id}`),
    previous: join(dirname(home), `.${basename(home)}.before-restore-${id}`),
  };
}

export function writeRestoreJournal(journal: RestoreJournal): void {
  writePrivateFile(restoreJournalPath(journal.home), `${JSON.stringify(journal)}\n`);
}

export type RestoreRecovery = "none" | "rolled_back" | "completed" | "in_progress";

/**
 * Settles a restore a kill interrupted: before the swap its staged copy goes and the home stays
 * as it was; from the swap on, the staged copy is moved in if it is not yet, and the old home
 * goes. Answers what it did; a restore whose process still runs is left to it (`in_progress`).
 */
export async function recoverRestore(home: string): Promise<RestoreRecovery> {
  const path = restoreJournalPath(home);
  if (!existsSync(path)) return "none";
  const journal = readPrivateRecord(path, RestoreJournalSchema);
  // A journal that cannot be read names nothing to settle: the home is left as it is.
  if (journal === null || journal.home !== home) {
    removePrivateFile(path);
    return "none";
  }
  if (isOtherWriterAlive(journal)) return "in_progress";
  let outcome: RestoreRecovery;
  if (journal.phase === "build") {
    await rm(journal.staged, { recursive: true, force: true });
    outcome = "rolled_back";
  } else {
    if (existsSync(journal.staged)) {
      // The staged home was whole when the swap began: it takes the home's place.
      if (existsSync(home) && !existsSync(journal.previous)) await rename(home, journal.previous);
      await rename(journal.staged, home);
      syncFolder(dirname(home));
    }
    await rm(journal.previous, { recursive: true, force: true });
    outcome = "completed";
  }
  removePrivateFile(path);
  syncFolder(dirname(home));
  return outcome;
}
