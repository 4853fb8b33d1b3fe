// What the gateway is told about a backend, and when: every change is reported through
// onChange; a report that throws is logged, never thrown into the supervisor.
import type { SupervisedBackendStatus } from "./backend-supervisor.js";
import type { Supervision } from "./supervision.js";
import type { Tracked } from "./tracked-backend.js";

/** A backend's status as the gateway sees it, or null when the supervisor never started it. */
export function statusOf(sup: Supervision, name: string): SupervisedBackendStatus | null {
  const t = sup.tracked.get(name);
  return t ? statusOfRun(sup, t) : null;
}

/** One tracked backend's status, the gateway's view of it (an update's new version's too, before it takes over). */
export function statusOfRun(sup: Supervision, t: Tracked): SupervisedBackendStatus {
  const name = t.spec.name;
  const status: SupervisedBackendStatus = {
    name,
    running: t.running,
    healthy: t.healthy,
    pid: t.pid,
    port: t.port,
    slot: t.slot,
    startedAt: t.startedAt,
    restarts: t.restarts,
    held: sup.held.has(name),
    lastLines: t.relay?.lastLines() ?? [],
    exit: t.exit,
  };
  if (t.reason !== undefined) status.reason = t.reason;
  return status;
}

/**
 * Reports the backend's status; resolves once the report is delivered (as far as onChange says).
 * Only the app's current backend is reported: an update's new version, until it takes over, and
 * the old one it replaced are not what the gateway routes to.
 */
export async function announce(sup: Supervision, t: Tracked): Promise<void> {
  if (sup.tracked.get(t.spec.name) !== t) return;
  const status = statusOfRun(sup, t);
  t.reportedLastLine = status.lastLines.at(-1) ?? "";
  t.reportedLineCount = status.lastLines.length;
  try {
    await sup.onChange(t.spec.name, status);
  } catch (err) {
    sup.log("error", `onChange for app ${t.spec.name} threw: ${String(err)}`);
  }
}

/** Reports the backend's status without waiting for its delivery. */
export function emit(sup: Supervision, t: Tracked): void {
  void announce(sup, t);
}

/** True when the backend printed since its status was last reported. */
export function linesMoved(t: Tracked): boolean {
  const lines = t.relay?.lastLines() ?? [];
  return (lines.at(-1) ?? "") !== t.reportedLastLine || lines.length !== t.reportedLineCount;
}
