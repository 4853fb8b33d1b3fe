// After a hard kill of the bridge, backends it spawned may outlive it (sandbox "off" cannot ask
// the kernel to kill them with their parent). The next bridge reaps them from the run records,
// touching only a process that is provably the one recorded and provably orphaned (BACK-03):
// a pid reused by an unrelated process, or a backend whose bridge is still alive, is left alone.
import { setTimeout as sleep } from "node:timers/promises";
import { isSameProcess, readProcStat } from "./process-identity.js";
import { appOfRunKey, readRunRecords, removeRunRecord, type RunRecord } from "./run-records.js";
import { signalProcessGroup } from "../process-group.js";

export interface ReapReport {
  /** Names whose orphaned backend was killed. */
  killed: string[];
  /** Names left running, with why. */
  left: Array<{ name: string; why: string }>;
  /** Records removed because their process is gone or the pid now belongs to another process. */
  cleared: string[];
  unreadable: string[];
}

/** Why a recorded backend must not be killed, or null when it is a verified orphan. */
export function orphanVerdict(record: RunRecord, selfPid: number = process.pid): { kill: boolean; why: string } {
  const stat = readProcStat(record.pid);
  if (stat === null || stat.state === "Z") return { kill: false, why: "gone" };
  if (stat.startTime !== record.startTime) return { kill: false, why: "pid reused by another process" };
  if (stat.pgid !== record.pgid) return { kill: false, why: "process group changed" };
  if (record.bridgePid === selfPid) return { kill: false, why: "spawned by this bridge" };
  const bridgeAlive = isSameProcess(record.bridgePid, record.bridgeStartTime);
  if (stat.ppid === record.bridgePid && bridgeAlive) return { kill: false, why: "its bridge is alive" };
  if (stat.ppid === 1) return { kill: true, why: "parent is init (PPID 1)" };
  if (!bridgeAlive) return { kill: true, why: "its bridge is gone" };
  return { kill: false, why: `parent ${stat.ppid} is alive` };
}

/** Kills (SIGTERM, then SIGKILL after graceMs) each recorded backend that is a verified orphan. */
export async function reapOrphans(
  home: string,
  opts: { graceMs?: number; log?: (msg: string) => void } = {},
): Promise<ReapReport> {
  const graceMs = opts.graceMs ?? 5000;
  const { records, unreadable } = readRunRecords(home);
  const report: ReapReport = { killed: [], left: [], cleared: [], unreadable };
  const victims: RunRecord[] = [];
  for (const record of records) {
    const verdict = orphanVerdict(record);
    if (verdict.kill) victims.push(record);
    else if (verdict.why === "gone" || verdict.why === "pid reused by another process") {
      removeRunRecord(home, record.name);
      report.cleared.push(record.name);
    } else report.left.push({ name: record.name, why: verdict.why });
  }
  for (const record of victims) {
    opts.log?.(`reaping orphaned backend of app ${record.name} (pid ${record.pid})`);
    // The sandbox's own group gets the SIGTERM (bwrap does not forward it), but only while it is
    // still the child of the verified process.
    if (record.sandboxPgid !== undefined && readProcStat(record.sandboxPgid)?.ppid === record.pid)
      signalProcessGroup(record.sandboxPgid, "SIGTERM");
    signalProcessGroup(record.pgid, "SIGTERM");
  }
  const deadline = Date.now() + graceMs;
  while (victims.some((r) => isSameProcess(r.pid, r.startTime)) && Date.now() < deadline) await sleep(50);
  for (const record of victims) {
    // Re-verified before the SIGKILL: the pid may have exited and been reused during the grace.
    if (isSameProcess(record.pid, record.startTime)) signalProcessGroup(record.pgid, "SIGKILL");
    removeRunRecord(home, record.name);
    report.killed.push(appOfRunKey(record.name));
  }
  return report;
}
