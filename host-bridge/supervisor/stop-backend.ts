// How a backend is stopped: the gateway learns first that it is going, then its group gets
// SIGTERM and, after the grace, SIGKILL (the sandbox's group before the backend's own), and
// nothing it started in its group outlives it. Stopping every backend fits a fixed budget.
import { signalProcessGroup } from "../process-group.js";
import type { StopResult } from "./backend-supervisor.js";
import { announce } from "./status-report.js";
import type { Supervision } from "./supervision.js";
import { clearTimers, exitedWithin, withTimeout, type Tracked } from "./tracked-backend.js";

/** How long a stop waits for the gateway to learn that the backend is stopping before it signals it. */
const STOPPING_REPORT_WAIT_MS = 1_000;

/** SIGTERM to the backend's group, SIGKILL after the grace; resolves when it has exited. */
export async function stopBackend(sup: Supervision, name: string, graceMs: number): Promise<StopResult> {
  const t = sup.tracked.get(name);
  if (!t) return { ok: true, wasRunning: false, killed: false, exit: null };
  return stopRun(sup, t, graceMs);
}

/** Stops one tracked backend, the app's current one or an update's new version (successor.ts). */
export async function stopRun(sup: Supervision, t: Tracked, graceMs: number): Promise<StopResult> {
  t.stopping = true;
  clearTimers(t);
  if (!t.running) {
    if (t.reason?.endsWith("restarting")) t.reason = "stopped";
    return { ok: true, wasRunning: false, killed: false, exit: t.exit };
  }
  // The gateway learns that the backend is going before it is signalled, so the proxy answers
  // 503 at once from then on instead of sending requests to a backend that may take its whole
  // grace to exit, holding them meanwhile (bounded: a gateway that does not answer holds no stop).
  t.healthy = false;
  t.reason = "stopping";
  await withTimeout(announce(sup, t), STOPPING_REPORT_WAIT_MS, undefined);
  // Sandboxed, the backend is in bwrap's own session: signal that group first, because bwrap
  // does not forward SIGTERM and its death would SIGKILL the backend with no grace.
  signalProcessGroup(t.sandboxPgid ?? t.pgid, "SIGTERM");
  let killed = false;
  if (!(await exitedWithin(t, graceMs))) {
    killed = true;
    // The sandbox first, so bwrap itself sees its child die, reaps it and exits.
    if (t.sandboxPgid !== null) {
      signalProcessGroup(t.sandboxPgid, "SIGKILL");
      await exitedWithin(t, 500);
    }
    signalProcessGroup(t.pgid, "SIGKILL");
    await exitedWithin(t, 2_000);
  }
  // Anything the backend started in its group and left behind goes with it.
  signalProcessGroup(t.pgid, "SIGKILL");
  await sup.opts.egress?.stop(t.runKey);
  // Its last lines and the drop note reach the log before stop returns (bounded: a grandchild
  // that kept the pipes open must not hold the stop).
  if (t.relay) await withTimeout(t.relay.finished(), 500, undefined);
  return { ok: true, wasRunning: true, killed, exit: t.exit };
}

/** Stops every backend this supervisor spawned, concurrently, within stopAllBudgetMs (BACK-21). */
export async function stopEveryBackend(sup: Supervision): Promise<void> {
  const budget = sup.opts.stopAllBudgetMs;
  const grace = Math.max(0, Math.min(sup.opts.stopGraceMs, budget - 3_500)); // grace + kill waits + log drain fit the budget
  const runs = [...sup.tracked.values(), ...sup.successors.values()];
  const stops = Promise.allSettled(runs.map((t) => stopRun(sup, t, grace))).then(() => undefined);
  await withTimeout(stops, budget, undefined);
  for (const t of runs) {
    if (!t.running) continue;
    sup.log("warning", `app ${t.spec.name} backend (pid ${t.pid}) outlived the stop budget; killed`);
    signalProcessGroup(t.sandboxPgid, "SIGKILL");
    signalProcessGroup(t.pgid, "SIGKILL");
  }
}
