// One spawned run of a backend, followed: its state recorded on the tracked backend, its output
// relayed to the bridge log with every secret it was given masked, its exit handed to the
// watchdog once, and a run record on disk so a later bridge can reap it after a hard kill.
import type { ChildProcess } from "node:child_process";
import type { Writable } from "node:stream";
import { MIN_SECRET_CHARS } from "../../kernel/text/text-safety.js";
import type { ChildGroup } from "../sandbox/bounds.js";
import { credentialValuesOf } from "../sandbox/child-env.js";
import { createLogRelay } from "../sandbox/log-relay.js";
import { readChildPid } from "../sandbox/run-confined.js";
import { signalProcessGroup } from "../process-group.js";
import { readProcStat } from "./process-identity.js";
import { writeRunRecord } from "./run-records.js";
import { SANDBOX_BLOCK_FD, SANDBOX_INFO_FD } from "./spawn-child.js";
import type { Supervision } from "./supervision.js";
import type { Tracked } from "./tracked-backend.js";
import { handleExit } from "./watchdog.js";

/** The run's state, its masked log relay and its exit, recorded on the tracked backend. */
export function trackRun(
  sup: Supervision,
  t: Tracked,
  generation: number,
  child: ChildProcess,
  run: { env: Record<string, string>; port: number; slot: number | null; group: ChildGroup | null },
): void {
  const { spec } = t;
  t.group = run.group;
  t.limitsReached = [];
  const pid = child.pid ?? null;
  t.child = child;
  t.pid = pid;
  t.pgid = pid;
  t.sandboxPgid = null;
  t.port = sup.opts.sandbox.mode === "on" ? null : run.port;
  t.slot = run.slot;
  t.startedAt = new Date().toISOString();
  t.running = pid !== null;
  t.healthy = false;
  t.healthyThisRun = false;
  t.reason = undefined;
  t.lastMiss = undefined;
  // Every assigned secret is masked by value, however short, on top of the passthrough values:
  // in its log lines and in what it answers a health check.
  t.masked = [
    ...new Set([
      ...credentialValuesOf(run.env),
      ...Object.values(spec.secrets ?? {}).filter((v) => v.length >= MIN_SECRET_CHARS),
    ]),
  ].sort((a, b) => b.length - a.length);
  const relay = createLogRelay({
    tag: `app ${spec.name} backend (pid ${pid ?? "none"})`,
    sink: (level, line) => sup.log(level, line),
    secrets: t.masked,
  });
  t.relay = relay;
  if (child.stdout) relay.attach(child.stdout, "info");
  // A backend's own level word decides (many loggers write everything to stderr); none is info.
  if (child.stderr) relay.attach(child.stderr, "from-line");

  let resolveExited: () => void = () => {};
  t.exited = new Promise<void>((resolve) => (resolveExited = resolve));
  let ended = false;
  const end = (code: number | null, signal: string | null, spawnError?: string) => {
    if (ended) return;
    ended = true;
    handleExit(sup, t, generation, code, signal, spawnError);
    resolveExited();
  };
  child.once("exit", (code, signal) => end(code, signal));
  child.once("error", (err) => {
    if (pid === null) end(null, null, err.message);
    else sup.log("warning", `app ${spec.name} backend (pid ${pid}): ${err.message}`);
  });
  if (pid !== null) recordRun(sup, t);
}

/** A confined run's sandbox descriptors: bwrap names its child on one, and waits on the other for the go. */
export function readSandboxStreams(sup: Supervision, t: Tracked, generation: number, child: ChildProcess): void {
  const info = child.stdio[SANDBOX_INFO_FD];
  if (info && "on" in info)
    readSandboxInfo(
      sup,
      t,
      generation,
      info as NodeJS.ReadableStream,
      child.stdio[SANDBOX_BLOCK_FD] as Writable | null,
    );
}

/** Writes the run record reaping needs (pids, start times, this bridge); a failure only costs that reaping. */
function recordRun(sup: Supervision, t: Tracked): void {
  const stat = t.pid === null ? null : readProcStat(t.pid);
  if (!stat || t.pid === null || t.pgid === null) return;
  try {
    writeRunRecord(sup.opts.home, {
      name: t.runKey,
      pid: t.pid,
      pgid: t.pgid,
      ...(t.sandboxPgid !== null ? { sandboxPgid: t.sandboxPgid } : {}),
      startTime: stat.startTime,
      bridgePid: process.pid,
      bridgeStartTime: sup.bridgeStartTime,
      startedAt: t.startedAt ?? new Date().toISOString(),
    });
  } catch (err) {
    // Not fatal: the record only serves reaping after a hard kill of this bridge.
    sup.log("warning", `app ${t.spec.name}: could not write its run record: ${String(err)}`);
  }
}

/**
 * bwrap names its sandboxed child on the info descriptor; with cgroup bounds the child is
 * attached to the run's group and only then released from bwrap's block descriptor, so not
 * one of its processes starts outside the limits.
 */
function readSandboxInfo(
  sup: Supervision,
  t: Tracked,
  generation: number,
  stream: NodeJS.ReadableStream,
  block: Writable | null,
): void {
  void readChildPid(stream, 10_000).then((childPid) => {
    if (generation !== t.generation || !t.running || childPid === null || childPid <= 1) return;
    if (t.group) {
      try {
        t.group.attach(childPid);
      } catch (cause) {
        sup.log("error", `app ${t.spec.name} backend could not be placed under its limits: ${String(cause)}`);
        signalProcessGroup(t.pgid, "SIGKILL");
        return;
      }
      block?.end("go");
    }
    t.sandboxPgid = childPid;
    recordRun(sup, t);
  });
}
