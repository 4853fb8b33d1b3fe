// Which `mcp run` processes serve an app right now, and the hold an update puts on them: an
// update stops every one of them before it copies the app's data/, and none starts until the
// update is over, so no MCP server writes data/ while it is copied (UPD-08, as for the backend).
//
// `mcp run` is the agent's child, not the bridge's, so the two meet in the home: each run
// leaves `<home>/run/mcp/<app>/<pid>.json` for its life, and an update leaves
// `<home>/run/mcp/<app>.hold`. A run writes its file before it looks for the hold; an update
// writes the hold before it lists the files: whichever comes second sees the other.
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { homePaths } from "../home";
import { writePrivateFile } from "../private-file";

/** How long a run has to end on SIGTERM before it is killed. */
const STOP_GRACE_MS = 5_000;
const POLL_MS = 50;

function folderOf(home: string): string {
  return join(homePaths(home).run, "mcp");
}

function holdPath(home: string, app: string): string {
  return join(folderOf(home), `${app}.hold`);
}

/**
 * The kernel's start time of a running process (field 22 of /proc/<pid>/stat): a pid reused
 * later has another. null once it has ended, as a zombie its parent has not reaped yet too.
 */
function startTicks(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name may hold spaces and parentheses: fields are counted after its last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[0] === "Z" || fields[0] === "X" ? null : (fields[19] ?? null);
  } catch {
    return null;
  }
}

/** What a run keeps of itself while it serves. */
export interface RunRecord {
  /** Adds the server's process group, so a run killed before it could end it does not leave it running. */
  serverSpawned(pid: number): void;
  /** Removes the record: the run is over. */
  end(): void;
}

interface StoredRun {
  server: string;
  pid: number;
  start: string | null;
  group?: { pid: number; start: string | null };
}

/**
 * Records this process as a run of `app`'s `server`. Answers null when the app is held (an
 * update is under way: the run must not start, and leaves no record).
 */
export function registerRun(home: string, app: string, server: string): RunRecord | null {
  const folder = join(folderOf(home), app);
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const path = join(folder, `${process.pid}.json`);
  const stored: StoredRun = { server, pid: process.pid, start: startTicks(process.pid) };
  writePrivateFile(path, JSON.stringify(stored));
  const end = () => forget(path);
  if (isHeld(home, app)) {
    end();
    return null;
  }
  return {
    serverSpawned(pid) {
      writePrivateFile(path, JSON.stringify({ ...stored, group: { pid, start: startTicks(pid) } }));
    },
    end,
  };
}

/** True while an update holds `app`'s MCP servers: a hold whose writer has ended (a crash) holds nothing. */
export function isHeld(home: string, app: string): boolean {
  try {
    const hold = JSON.parse(readFileSync(holdPath(home, app), "utf8")) as { pid?: unknown; start?: unknown };
    return typeof hold.pid === "number" && hold.start !== null && startTicks(hold.pid) === hold.start;
  } catch {
    return false; // none (each is written whole: writePrivateFile renames it into place)
  }
}

/** The runs of `app` recorded now whose process is still the one that wrote its record. */
function liveRuns(home: string, app: string): StoredRun[] {
  const folder = join(folderOf(home), app);
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return [];
  }
  const runs: StoredRun[] = [];
  for (const name of names) {
    if (!name.endsWith(".json")) continue; // a record still being written
    const path = join(folder, name);
    try {
      const record = JSON.parse(readFileSync(path, "utf8")) as StoredRun;
      if (typeof record.pid === "number" && record.start !== null && startTicks(record.pid) === record.start)
        runs.push(record);
      else forget(path); // a run that died without removing its record
    } catch {
      forget(path); // unreadable: no run can be told from it
    }
  }
  return runs;
}

/** Removes a record, whatever is at its path; one that cannot be removed is left, never thrown. */
function forget(path: string): void {
  try {
    rmSync(path, { force: true, recursive: true });
  } catch {
    // left for the next look
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

/**
 * Holds `app`'s MCP servers and stops every run serving one: SIGTERM (the run ends its server's
 * whole group and exits), then SIGKILL for one still there after the grace (its sandbox dies
 * with it). Resolves with how many were stopped; `release` lets runs start again.
 */
export async function holdAndStop(home: string, app: string, graceMs = STOP_GRACE_MS): Promise<number> {
  mkdirSync(folderOf(home), { recursive: true, mode: 0o700 });
  writePrivateFile(holdPath(home, app), JSON.stringify({ pid: process.pid, start: startTicks(process.pid) }));
  const runs = liveRuns(home, app);
  for (const run of runs) signal(run.pid, "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (liveRuns(home, app).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, POLL_MS));
  for (const run of liveRuns(home, app)) {
    // The server's group first (unsandboxed, it would outlive its run), while its leader is the one recorded.
    const group = run.group;
    if (group && group.start !== null && startTicks(group.pid) === group.start) signal(-group.pid, "SIGKILL");
    signal(run.pid, "SIGKILL");
  }
  while (liveRuns(home, app).length > 0 && Date.now() < deadline + graceMs)
    await new Promise((r) => setTimeout(r, POLL_MS));
  return runs.length;
}

/** Ends the hold `holdAndStop` put on `app`. */
export function release(home: string, app: string): void {
  forget(holdPath(home, app));
}
