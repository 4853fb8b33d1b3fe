// Identifies a process by pid AND start time, so a pid the kernel has reused for an unrelated
// process is never mistaken for a backend we spawned (and never killed).
import { readFileSync, readlinkSync } from "node:fs";

export interface ProcStat {
  pid: number;
  ppid: number;
  pgid: number;
  /** Clock ticks since boot at which the process started (field 22 of /proc/<pid>/stat). */
  startTime: string;
  state: string;
}

/** Reads /proc/<pid>/stat, or null when no such process exists (or it is a zombie already reaped). */
export function readProcStat(pid: number): ProcStat | null {
  if (!Number.isInteger(pid) || pid <= 0) return null;
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // The command name (field 2) is in parentheses and may itself contain spaces or ')'.
  const close = text.lastIndexOf(")");
  if (close === -1) return null;
  const fields = text
    .slice(close + 2)
    .trim()
    .split(/\s+/);
  // fields[0] is field 3 (state); field N is fields[N - 3].
  const state = fields[0] ?? "";
  const ppid = Number(fields[1]);
  const pgid = Number(fields[2]);
  const startTime = fields[19] ?? "";
  if (!Number.isInteger(ppid) || !Number.isInteger(pgid) || startTime === "") return null;
  return { pid, ppid, pgid, startTime, state };
}

/** True when `pid` is alive (not a zombie) and is the process that started at `startTime`. */
export function isSameProcess(pid: number, startTime: string): boolean {
  const stat = readProcStat(pid);
  return stat !== null && stat.state !== "Z" && stat.startTime === startTime;
}

/** The executable a live process runs (/proc/<pid>/exe), or null when it cannot be read. */
export function readExecutable(pid: number): string | null {
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    return readlinkSync(`/proc/${pid}/exe`).replace(/ \(deleted\)$/, "");
  } catch {
    return null;
  }
}

/**
 * Whether some process has the pid now (signal 0; EPERM is someone else's, alive). It cannot
 * tell a reused pid from the process that had it: isRecordedProcessAlive can, where a start
 * time was recorded.
 */
export function isPidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Who a recorded pid was: its start time and, when known, its executable. */
export interface RecordedProcess {
  pid: number;
  startTime: string | null;
  exe: string | null;
}

/** The identity of the live process `pid` right now, or null when it is gone. */
export function identityOf(pid: number): RecordedProcess | null {
  const stat = readProcStat(pid);
  if (stat === null || stat.state === "Z") return null;
  return { pid, startTime: stat.startTime, exe: readExecutable(pid) };
}

/**
 * True only when the recorded process is still the one alive under that pid: same start time
 * and, when an executable was recorded, the same executable. A record without a start time
 * proves nothing and is never acted on: a reused pid must never receive a signal.
 */
export function isRecordedProcessAlive(record: RecordedProcess): boolean {
  if (record.startTime === null || !isSameProcess(record.pid, record.startTime)) return false;
  if (record.exe === null) return true;
  return readExecutable(record.pid) === record.exe;
}
