// Start-time recovery (UPD-06, LIFE-03): every journal a killed gateway left is finished or
// undone, and the quarantine is emptied. It runs in two halves because two stores are
// involved. The first, at the bridge's prepare step before anything else, settles what the
// folders alone decide (a move that never happened, a swap cut between its two renames) and
// empties the quarantine. What is left depends on whether the gateway's record was written
// before the crash, so the second half asks the gateway (once it is up, before any backend
// starts) and then keeps or undoes the folder to match: the app ends entirely old or entirely
// new, never a folder without a record or a record without a folder.
import { existsSync, readdirSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { finishRemoval, undoInstall } from "./install-app";
import { clearJournal, listJournals, type Journal } from "./transition-journal";
import { commitUpdate, restoreRollback, rollbackDir } from "./update-app";
import { SecretStore, secretStorePaths } from "../secrets/secret-store";

export interface RecoveryContext {
  home: string;
  appsDir: string;
  quarantine: string;
  log: (line: string) => void;
}

export interface PendingRecovery {
  /** The journals whose outcome depends on the gateway's record. */
  pending: Journal[];
  /** Settles them: `askGateway` answers from the record whether each transition stands. */
  settle(askGateway: (journal: Journal) => Promise<"finish" | "undo">): Promise<void>;
}

/** The folders-only half: settles what needs no record, empties the quarantine, answers the rest. */
export async function recoverTransitions(ctx: RecoveryContext): Promise<PendingRecovery> {
  const pending: Journal[] = [];
  for (const journal of await listJournals(ctx.home)) {
    const appDir = join(ctx.appsDir, journal.name);
    try {
      if (journal.op === "install") {
        // Killed before the move into place: nothing of it is outside the quarantine.
        if (!existsSync(appDir)) await clearJournal(ctx.home, journal.name);
        else pending.push(journal);
      } else if (journal.op === "update") {
        const kept = rollbackDir(ctx.appsDir, journal.name);
        if (!existsSync(kept) || !existsSync(appDir)) {
          // The old version never left, or left and the new one never arrived: it goes back.
          await restoreRollback(ctx.appsDir, journal.name, journal.stagedDir, journal.venvMoved);
          await clearJournal(ctx.home, journal.name);
          ctx.log(`bridge: the interrupted update of ${journal.name} was undone; the previous version is in place`);
        } else pending.push(journal);
      } else {
        // An uninstall that never moved the folder changed nothing; one that did is finished.
        if (existsSync(appDir) && !existsSync(journal.trashDir)) await clearJournal(ctx.home, journal.name);
        else pending.push(journal);
      }
    } catch (error) {
      ctx.log(
        `bridge: could not recover the interrupted ${journal.op} of ${journal.name}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
  // Uninstall folders still waiting in the quarantine are the only thing in it worth keeping.
  const keep = new Set(pending.flatMap((j) => (j.op === "uninstall" ? [j.trashDir] : [])));
  let cleaned = 0;
  for (const entry of existsSync(ctx.quarantine) ? readdirSync(ctx.quarantine) : []) {
    const path = join(ctx.quarantine, entry);
    if (keep.has(path)) continue;
    await rm(path, { recursive: true, force: true });
    cleaned += 1;
  }
  if (cleaned > 0) ctx.log(`bridge: removed ${cleaned} folder(s) a stopped install or update left in the quarantine`);

  return {
    pending,
    async settle(askGateway) {
      for (const journal of pending) {
        try {
          const outcome = await askGateway(journal);
          await settleOne(ctx, journal, outcome);
          ctx.log(
            `bridge: the interrupted ${journal.op} of ${journal.name} was ${outcome === "finish" ? "finished" : "undone"}`,
          );
        } catch (error) {
          ctx.log(
            `bridge: could not settle the interrupted ${journal.op} of ${journal.name}: ${error instanceof Error ? error.message : String(error)}`,
          );
        }
      }
    },
  };
}

/** Makes the folders match the gateway's verdict on one journal, then drops the journal. */
export async function settleOne(ctx: RecoveryContext, journal: Journal, outcome: "finish" | "undo"): Promise<void> {
  if (journal.op === "install") {
    if (outcome === "undo") await undoInstall(ctx.appsDir, journal.name, journal.adoptedData);
  } else if (journal.op === "update") {
    if (outcome === "finish") await commitUpdate(ctx.home, ctx.appsDir, journal.name);
    else await restoreRollback(ctx.appsDir, journal.name, journal.stagedDir, journal.venvMoved);
  } else {
    // The gateway has forgotten the record (it always finishes an uninstall that moved the folder).
    const folder = existsSync(journal.trashDir) ? journal.trashDir : join(ctx.appsDir, journal.name);
    if (existsSync(folder)) {
      await finishRemoval(ctx.appsDir, journal.name, folder, journal.purgeData, {
        version: journal.version,
        consentDigest: journal.consentDigest,
      });
    }
    // Every sealed copy of the owner's secrets the app held goes too, whether or not the
    // interrupted removal got that far; left, it was listed as used by an app that is gone.
    new SecretStore(secretStorePaths(ctx.home)).forgetApp(journal.name);
  }
  await clearJournal(ctx.home, journal.name);
}
