// A replace restore: a stopped gateway's home rebuilt from a checked archive (archive-check.ts).
// Every part is written into a staged home beside it, each Durable Object's export becomes its
// SQLite file, the log's anchor is its exported head; then the journal (restore-journal.ts)
// swaps the staged home in. The steps are named so the test build can hold a restore at each.
import { randomBytes } from "node:crypto";
import { mkdir, rename, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { existsSync, mkdirSync } from "node:fs";
import { DURABLE_OBJECT_CLASSES, storeFolder } from "../durable-object-stores";
import { syncFolder, writePrivateFile } from "../private-file";
import type { CheckedArchive } from "./archive-check";
import { restoreFolders, restoreJournalPath, writeRestoreJournal, type RestoreJournal } from "./restore-journal";
import { writeStoreFile } from "./store-files";
import { writeArchiveFiles } from "./archive-files";
import { writePendingPackages } from "./restore-packages";
import { thisJournalWriter } from "./journal-writer";
import { rehomeMcpEntries } from "../mcp/mcp-json";
import { packageRoot } from "../package-root";

export const RESTORE_STEPS = ["build", "build_parts", "swap", "moved_aside", "finish"] as const;
export type RestoreStep = (typeof RESTORE_STEPS)[number];

export interface ReplaceResult {
  home: string;
  parts: number;
  apps: string[];
  /** Apps whose packages the next start installs before it starts them (restore-packages.ts). */
  packages_pending: string[];
  log_head: number;
}

/** Each Durable Object's export as its SQLite file, under the name the archive recorded. */
function writeStores(root: string, checked: CheckedArchive): void {
  const stateDir = join(root, "state");
  for (const { className, file } of checked.archive.manifest.store_files) {
    if (!DURABLE_OBJECT_CLASSES.some((d) => d.className === className)) continue;
    const exported = checked.state.stores[className as keyof typeof checked.state.stores];
    const folder = storeFolder(stateDir, className as (typeof DURABLE_OBJECT_CLASSES)[number]["className"]);
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    writeStoreFile(join(folder, file), exported);
    syncFolder(folder);
  }
  syncFolder(stateDir);
}

/** Rebuilds `home` from the checked archive; the gateway of `home` must be stopped (the caller checks). */
export async function replaceHome(
  home: string,
  checked: CheckedArchive,
  step: (s: RestoreStep) => Promise<void>,
): Promise<ReplaceResult> {
  const id = randomBytes(6).toString("hex");
  const { staged, previous } = restoreFolders(home, id);
  const journal: RestoreJournal = { version: 1, phase: "build", home, staged, previous, ...thisJournalWriter() };
  // A home on a new machine may not have its parent yet.
  await mkdir(dirname(home), { recursive: true, mode: 0o700 });
  writeRestoreJournal(journal);
  await mkdir(staged, { mode: 0o700 });
  await step("build");
  const parts = await writeArchiveFiles(
    checked,
    (path) => join(staged, path),
    async (written, total) => {
      if (written === Math.ceil(total / 2)) await step("build_parts");
    },
  );
  writeStores(staged, checked);
  // The archived mcp.json names the archived home: its servers are started against this one.
  rehomeMcpEntries(join(staged, "mcp.json"), { cli: join(packageRoot, "bin", "personalclaw.mjs"), home });
  // The anchor is the exported head: the restored log is exactly as long as the anchor says.
  const { head } = checked.archive.manifest.log;
  writePrivateFile(join(staged, "sel_anchor.json"), `${JSON.stringify({ seq: head.seq, mac: head.mac })}\n`);
  // Written in the staged home: it arrives with the swap, so no restored app starts without its packages.
  const pending = checked.archive.manifest.apps.filter((a) => a.packages.length > 0).map((a) => a.name);
  writePendingPackages(
    staged,
    pending.map((name) => ({ name })),
  );
  syncFolder(staged);
  writeRestoreJournal({ ...journal, phase: "swap" });
  await step("swap");
  if (existsSync(home)) await rename(home, previous);
  await step("moved_aside");
  await rename(staged, home);
  syncFolder(dirname(home));
  writeRestoreJournal({ ...journal, phase: "finish" });
  await step("finish");
  await rm(previous, { recursive: true, force: true });
  await rm(restoreJournalPath(home), { force: true });
  syncFolder(dirname(home));
  return {
    home,
    parts,
    apps: checked.archive.manifest.apps.map((a) => a.name),
    packages_pending: pending,
    log_head: head.seq,
  };
}
