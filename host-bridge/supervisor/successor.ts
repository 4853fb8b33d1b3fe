// An update's new version started beside the running one (docs/design/app-lifecycle.md, "The
// old version serves through the health gate"): it gets its own socket slot (or port), run
// record and egress broker, and the gateway is told nothing of it, so it keeps routing to the
// running version. Once the new one is healthy it takes over in one report (its address and
// proxy secret together) and only then is the old one stopped; if it never becomes healthy it
// is stopped and the running version never noticed.
import { errorMessage } from "../../kernel/contracts/errors.js";
import type { BackendSpec, StartResult, SupervisedBackendStatus } from "./backend-supervisor.js";
import { successorRunKey } from "./run-records.js";
import { announce, statusOfRun } from "./status-report.js";
import { stopRun } from "./stop-backend.js";
import type { Supervision } from "./supervision.js";
import { newTracked } from "./tracked-backend.js";

/**
 * Starts the new version beside the app's current backend. The watchdog never restarts it while
 * it waits (the app is held for the update), and it is never reported until it takes over.
 */
export async function startSuccessor(sup: Supervision, spec: BackendSpec): Promise<StartResult> {
  if (sup.successors.has(spec.name))
    return {
      ok: false,
      code: "backend_already_running",
      reason: errorMessage("backend_already_running", { app: spec.name }),
    };
  const current = sup.tracked.get(spec.name);
  const t = newTracked(spec, current?.restarts ?? 0, successorRunKey(spec.name, current?.runKey), true);
  sup.successors.set(spec.name, t);
  const launched = await sup.launch(t);
  if (!launched.ok) {
    sup.successors.delete(spec.name);
    return launched;
  }
  return { ok: true, name: spec.name, port: t.port, slot: t.slot, secret: t.secret, pid: t.pid };
}

/** The new version's status and its last missed health probe, or null when none was started. */
export function successorStatus(
  sup: Supervision,
  name: string,
): { status: SupervisedBackendStatus; lastMiss: string | null } | null {
  const t = sup.successors.get(name);
  return t ? { status: statusOfRun(sup, t), lastMiss: t.lastMiss ?? null } : null;
}

/**
 * The new version takes over: it becomes the app's backend and is reported (the gateway routes
 * to its address with its secret from that report on), then the old one is stopped. Answers
 * false when no new version was waiting.
 */
export async function promoteSuccessor(sup: Supervision, name: string, graceMs: number): Promise<boolean> {
  const next = sup.successors.get(name);
  if (!next) return false;
  const old = sup.tracked.get(name);
  sup.successors.delete(name);
  next.successor = false;
  sup.tracked.set(name, next);
  await announce(sup, next);
  if (old) await stopRun(sup, old, graceMs);
  return true;
}

/** Stops the new version that did not pass its health gate; the running one is untouched. */
export async function dropSuccessor(sup: Supervision, name: string, graceMs: number): Promise<void> {
  const t = sup.successors.get(name);
  if (!t) return;
  await stopRun(sup, t, graceMs);
  sup.successors.delete(name);
}
