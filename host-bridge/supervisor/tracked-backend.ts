// One backend as the supervisor tracks it across its runs: the state of the current run, its
// counts of revivals and failed starts, and the timers of the run, which never outlive it
// (a stop or an exit clears every one, so no probe or restart fires for a run that is over).
import type { ChildProcess } from "node:child_process";
import type { ChildGroup, LimitHit } from "../sandbox/bounds.js";
import type { LogRelay } from "../sandbox/log-relay.js";
import type { StorageWatch } from "../sandbox/storage-limit.js";
import { generateAppSecret } from "./app-secret.js";
import type { BackendExit, BackendSpec } from "./backend-supervisor.js";

export interface Tracked {
  spec: BackendSpec;
  /**
   * What names this backend's run record and egress broker: the app's name, or its successor's
   * key (run-records.ts) for a new version started beside the running one during an update.
   */
  runKey: string;
  /** True while it is an update's new version, started beside the running one: the gateway is not told of it. */
  successor: boolean;
  secret: string;
  generation: number;
  child: ChildProcess | null;
  pid: number | null;
  pgid: number | null;
  sandboxPgid: number | null;
  port: number | null;
  slot: number | null;
  startedAt: string | null;
  running: boolean;
  healthy: boolean;
  healthyThisRun: boolean;
  restarts: number;
  failedStarts: number;
  exit: BackendExit | null;
  reason?: string;
  /** What the current run's last missed health probe met instead of a 2xx (a failed start says it). */
  lastMiss?: string;
  /** The values masked in whatever the current run says: its assigned secrets and passed-through credentials. */
  masked?: readonly string[];
  relay: LogRelay | null;
  /** The cgroup of the current run, when bounds are by cgroup. */
  group: ChildGroup | null;
  /** The last line and line count of the newest status report (linesMoved). */
  reportedLastLine: string;
  reportedLineCount: number;
  /** Limits this run reached, noted before the bridge stopped it or the kernel killed it. */
  limitsReached: LimitHit[];
  /** The measure of data/ against its share of the storage limit, while a run with storage lasts. */
  storage: StorageWatch | null;
  stopping: boolean;
  gaveUp: boolean;
  exited: Promise<void>;
  timers: Set<NodeJS.Timeout>;
  restartTimer: NodeJS.Timeout | null;
}

/** A backend about to be started: a fresh secret, nothing running yet, and the revivals it had here before. */
export function newTracked(
  spec: BackendSpec,
  revivals: number,
  runKey: string = spec.name,
  successor = false,
): Tracked {
  return {
    spec: { ...spec, backend: { ...spec.backend, args: [...(spec.backend.args ?? [])] } },
    runKey,
    successor,
    secret: generateAppSecret(),
    generation: 0,
    child: null,
    pid: null,
    pgid: null,
    sandboxPgid: null,
    port: null,
    slot: null,
    startedAt: null,
    running: false,
    healthy: false,
    healthyThisRun: false,
    restarts: revivals,
    failedStarts: 0,
    exit: null,
    relay: null,
    group: null,
    reportedLastLine: "",
    reportedLineCount: 0,
    limitsReached: [],
    storage: null,
    stopping: false,
    gaveUp: false,
    exited: Promise.resolve(),
    timers: new Set(),
    restartTimer: null,
  };
}

/** Resolves with the promise's value, or `fallback` after ms; the timer never outlives the race. */
export function withTimeout<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<T>((resolve) => (timer = setTimeout(() => resolve(fallback), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Runs fn after ms as one of the run's timers (clearTimers cancels it). */
export function later(t: Tracked, ms: number, fn: () => void | Promise<void>): void {
  const timer = setTimeout(() => {
    t.timers.delete(timer);
    void fn();
  }, ms);
  t.timers.add(timer);
}

/** Cancels every timer of the run, its pending restart included. */
export function clearTimers(t: Tracked): void {
  for (const timer of t.timers) clearTimeout(timer);
  t.timers.clear();
  if (t.restartTimer) clearTimeout(t.restartTimer);
  t.restartTimer = null;
}

/** True once the run has exited, false when ms pass first. */
export async function exitedWithin(t: Tracked, ms: number): Promise<boolean> {
  if (!t.running) return true;
  return withTimeout(
    t.exited.then(() => true),
    ms,
    false,
  );
}
