// The journal of a multi-step transition (install, update, uninstall): one small file per app
// under <home>/journal/, written (and flushed to disk) before the transition's first step that
// cannot simply be dropped, and removed once the gateway's record and the app's folder agree
// again. The next start reads what is left (recover-transitions.ts) and finishes or undoes it.
import { constants, existsSync, readdirSync } from "node:fs";
import { link, mkdir, open, rename, rm } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { z } from "zod";
import { ParkedDataViewSchema } from "../../kernel/contracts/parked-data";
import { ReadyUpdateSchema } from "../../kernel/contracts/bridge-operations";
import { readPrivateRecord } from "../private-record";

export const JournalSchema = z.discriminatedUnion("op", [
  z.object({
    op: z.literal("install"),
    name: z.string(),
    digest: z.string(),
    /** The parked data this install took over: given back if the install is undone. */
    adoptedData: ParkedDataViewSchema.nullable(),
    startedAt: z.string(),
  }),
  z.object({
    op: z.literal("update"),
    name: z.string(),
    fromDigest: z.string(),
    toDigest: z.string(),
    /** The quarantine copy being prepared as the new version. */
    stagedDir: z.string(),
    /** venv/ was moved by rename from the old folder into the new one. */
    venvMoved: z.boolean(),
    /**
     * Set once the new version passed its health gate: it serves and writes data/ from then on,
     * so the update is finished forward (recorded from this), never undone.
     */
    ready: ReadyUpdateSchema.optional(),
    startedAt: z.string(),
  }),
  z.object({
    op: z.literal("uninstall"),
    name: z.string(),
    purgeData: z.boolean(),
    version: z.string(),
    consentDigest: z.string(),
    /** Where the folder is moved, in one rename, before it is taken apart. */
    trashDir: z.string(),
    startedAt: z.string(),
  }),
]);
export type Journal = z.infer<typeof JournalSchema>;

/** A ready update carries its manifest, review and UI file list. */
const MAX_JOURNAL_BYTES = 4 * 1024 * 1024;

/** The folder of journals under the home (0700). */
export function journalDir(home: string): string {
  return join(home, "journal");
}

function journalPath(home: string, name: string): string {
  return join(journalDir(home), `${name}.json`);
}

/**
 * Writes the journal of `journal.name` durably: a temporary file, fsync, then into place, fsync
 * of the folder. With `exclusive`, an existing journal is never replaced (answers false): a
 * second install of the same name under way in parallel must not take over the first's journal.
 */
export async function writeJournal(
  home: string,
  journal: Journal,
  opts: { exclusive?: boolean } = {},
): Promise<boolean> {
  const dir = journalDir(home);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const text = `${JSON.stringify(JournalSchema.parse(journal))}\n`;
  const temporary = `${journalPath(home, journal.name)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  const fh = await open(
    temporary,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    await fh.writeFile(text);
    await fh.sync();
  } finally {
    await fh.close();
  }
  if (opts.exclusive) {
    try {
      await link(temporary, journalPath(home, journal.name));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw error;
    } finally {
      await rm(temporary, { force: true });
    }
  } else {
    await rename(temporary, journalPath(home, journal.name));
  }
  await syncFolder(dir);
  return true;
}

/** Flushes a folder's entries (a rename in it) to disk. */
export async function syncFolder(dir: string): Promise<void> {
  const fh = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Removes the journal of `name`: the transition is over, finished or undone. */
export async function clearJournal(home: string, name: string): Promise<void> {
  await rm(journalPath(home, name), { force: true });
  if (existsSync(journalDir(home))) await syncFolder(journalDir(home));
}

/** The journal of `name`, or null. */
export async function readJournal(home: string, name: string): Promise<Journal | null> {
  const journal = readPrivateRecord(journalPath(home, name), JournalSchema, MAX_JOURNAL_BYTES);
  return journal?.name === name ? journal : null;
}

/** Every journal left under the home, by app name (temporary files of a torn write are removed). */
export async function listJournals(home: string): Promise<Journal[]> {
  const dir = journalDir(home);
  if (!existsSync(dir)) return [];
  const out: Journal[] = [];
  for (const entry of readdirSync(dir).sort()) {
    if (entry.endsWith(".tmp")) {
      await rm(join(dir, entry), { force: true });
      continue;
    }
    const match = /^([a-z0-9]+(?:-[a-z0-9]+)*)\.json$/.exec(entry);
    if (!match) continue;
    const journal = await readJournal(home, match[1]!);
    if (journal) out.push(journal);
    else await rm(join(dir, entry), { force: true });
  }
  return out;
}
