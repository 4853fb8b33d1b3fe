// <home>/run/backends/<name>.json: what a bridge spawned, so the next bridge can reap it after a
// hard kill. Parsed with zod when read: the file is on disk and may be stale or edited.
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { writePrivateFile } from "../private-file";

export const RunRecordSchema = z.object({
  name: z.string(),
  pid: z.number().int().positive(),
  pgid: z.number().int().positive(),
  /** The sandboxed session's process group (bwrap --info-fd child-pid), when sandboxed. */
  sandboxPgid: z.number().int().positive().optional(),
  /** /proc/<pid>/stat start time, so a reused pid is recognised. */
  startTime: z.string(),
  bridgePid: z.number().int().positive(),
  bridgeStartTime: z.string(),
  startedAt: z.string(),
});
export type RunRecord = z.infer<typeof RunRecordSchema>;

/**
 * The key of an update's new version started beside the running one: its run record and egress
 * broker must not take the place of the running version's. An app name never holds a dot.
 */
export function successorRunKey(name: string, runningKey: string | undefined): string {
  return runningKey === name ? `${name}.next` : name;
}

/** The app a run key belongs to. */
export function appOfRunKey(runKey: string): string {
  return runKey.endsWith(".next") ? runKey.slice(0, -".next".length) : runKey;
}

export function runRecordDir(home: string): string {
  return path.join(home, "run", "backends");
}

function recordPath(home: string, name: string): string {
  return path.join(runRecordDir(home), `${name}.json`);
}

/** Writes the record owner-only and atomically. */
export function writeRunRecord(home: string, record: RunRecord): void {
  const dir = runRecordDir(home);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writePrivateFile(recordPath(home, record.name), JSON.stringify(RunRecordSchema.parse(record)));
}

export function removeRunRecord(home: string, name: string): void {
  rmSync(recordPath(home, name), { force: true });
}

/** Every readable record; an unreadable one is reported by file name and left for the owner. */
export function readRunRecords(home: string): { records: RunRecord[]; unreadable: string[] } {
  let files: string[];
  try {
    files = readdirSync(runRecordDir(home)).filter((f) => f.endsWith(".json") && !f.startsWith("."));
  } catch {
    return { records: [], unreadable: [] };
  }
  const records: RunRecord[] = [];
  const unreadable: string[] = [];
  for (const file of files) {
    try {
      const parsed = RunRecordSchema.safeParse(JSON.parse(readFileSync(path.join(runRecordDir(home), file), "utf8")));
      if (parsed.success && `${parsed.data.name}.json` === file) records.push(parsed.data);
      else unreadable.push(file);
    } catch {
      unreadable.push(file);
    }
  }
  return { records, unreadable };
}
