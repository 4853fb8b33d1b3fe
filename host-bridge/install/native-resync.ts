// Re-syncing a native app at start (C-5, C-6) is all-or-nothing, like install and update. The
// fresh copy is staged in the quarantine; the installed folder is moved aside, its data/ moved
// into the fresh copy, and the fresh copy moved into place. Killed between those moves, data/
// sat in the quarantine, which the next start empties: the app's data was gone. So a journal,
// written durably under <home>/journal/ before the first move, names the folders; the next
// start reads it before it empties the quarantine and puts data/ back, ending with the old
// folder or the new one, data/ inside either way. Its file is `native.<name>.json`, a name the
// install/update/uninstall journals (transition-journal.ts) never use and their listing skips.
import { constants, existsSync, readdirSync } from "node:fs";
import { mkdir, open, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { journalDir, syncFolder } from "./transition-journal";
import { pauseAtNamedStep } from "./test-pause";
import { readPrivateRecord } from "../private-record";

const NativeResyncJournalSchema = z.strictObject({
  op: z.literal("native-resync"),
  name: z.string(),
  /** The fresh copy in the quarantine, moved into place last. */
  stagedDir: z.string(),
  /** Where the installed folder is moved aside (beside it, never in the quarantine). */
  previousDir: z.string(),
  startedAt: z.string(),
});
type NativeResyncJournal = z.infer<typeof NativeResyncJournalSchema>;

const JOURNAL_FILE = /^native\.([a-z0-9]+(?:-[a-z0-9]+)*)\.json$/;

function journalPath(home: string, name: string): string {
  return join(journalDir(home), `native.${name}.json`);
}

async function writeNativeJournal(home: string, journal: NativeResyncJournal): Promise<void> {
  const dir = journalDir(home);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const temporary = `${journalPath(home, journal.name)}.${process.pid}.tmp`;
  const fh = await open(
    temporary,
    constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    await fh.writeFile(`${JSON.stringify(NativeResyncJournalSchema.parse(journal))}\n`);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(temporary, journalPath(home, journal.name));
  await syncFolder(dir);
}

async function clearNativeJournal(home: string, name: string): Promise<void> {
  await rm(journalPath(home, name), { force: true });
  await syncFolder(journalDir(home));
}

export interface NativeResyncContext {
  home: string;
  appsDir: string;
  log: (line: string) => void;
}

/**
 * Puts the staged copy of native app `name` in place of the installed one, keeping its data/.
 * Journaled: a kill at any point leaves a whole app (old or new, with its data) after the next
 * start's recoverNativeResyncs.
 */
export async function resyncNativeApp(ctx: NativeResyncContext, name: string, stagedDir: string): Promise<void> {
  const appDir = join(ctx.appsDir, name);
  const journal: NativeResyncJournal = {
    op: "native-resync",
    name,
    stagedDir,
    previousDir: `${appDir}.previous-${process.pid}`,
    startedAt: new Date().toISOString(),
  };
  await writeNativeJournal(ctx.home, journal);
  try {
    if (existsSync(appDir)) {
      await rename(appDir, journal.previousDir);
      const data = join(journal.previousDir, "data");
      if (existsSync(data)) await rename(data, join(stagedDir, "data"));
      if (TEST_BUILD) await pauseAtNamedStep(ctx.home, `native:${name}:data_moved`, ctx.log);
    }
    await rename(stagedDir, appDir);
    await rm(journal.previousDir, { recursive: true, force: true });
  } catch (error) {
    await settleNativeResync(journal, ctx.appsDir);
    throw error;
  }
  await clearNativeJournal(ctx.home, name);
}

/** Ends an interrupted re-sync with a whole folder and its data/: the new one if it got in place, else the old. */
async function settleNativeResync(journal: NativeResyncJournal, appsDir: string): Promise<void> {
  const appDir = join(appsDir, journal.name);
  const moved = join(journal.stagedDir, "data");
  if (existsSync(appDir)) {
    // The fresh copy is in place; data/ moved into it first, unless the kill came between.
    const left = join(journal.previousDir, "data");
    if (!existsSync(join(appDir, "data")) && existsSync(left)) await rename(left, join(appDir, "data"));
    await rm(journal.previousDir, { recursive: true, force: true });
    return;
  }
  if (!existsSync(journal.previousDir)) return; // a first seeding that never got in place: nothing was there
  if (existsSync(moved) && !existsSync(join(journal.previousDir, "data")))
    await rename(moved, join(journal.previousDir, "data"));
  await rename(journal.previousDir, appDir);
}

/**
 * Settles every native re-sync a killed start left. Runs before the quarantine is emptied,
 * since an interrupted one may have data/ there.
 */
export async function recoverNativeResyncs(ctx: NativeResyncContext): Promise<void> {
  const dir = journalDir(ctx.home);
  for (const entry of existsSync(dir) ? readdirSync(dir).sort() : []) {
    const match = JOURNAL_FILE.exec(entry);
    if (!match) continue;
    const parsed = await readNativeJournal(join(dir, entry));
    try {
      if (parsed && parsed.name === match[1]) {
        await settleNativeResync(parsed, ctx.appsDir);
        ctx.log(`bridge: the interrupted re-sync of native app ${parsed.name} was settled; its data/ is in place`);
      }
      await clearNativeJournal(ctx.home, match[1]!);
    } catch (error) {
      ctx.log(
        `bridge: could not settle the interrupted re-sync of native app ${match[1]}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
}

async function readNativeJournal(path: string): Promise<NativeResyncJournal | null> {
  return readPrivateRecord(path, NativeResyncJournalSchema, 16 * 1024);
}
