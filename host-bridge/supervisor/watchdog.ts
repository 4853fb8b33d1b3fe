// What happens when a backend's run ends: a stop asked for is just recorded; a backend that
// exits on its own is restarted with backoff, unless it is held, reached its storage limit
// (started again it would only fill data/ further) or failed maxFailedStarts starts in a row
// before it ever answered its health check. A restart the launcher refuses is reported.
import { existsSync } from "node:fs";
import { describeLimits, LIMIT_WORDS } from "../sandbox/bounds.js";
import { APP_FOLDER_MISSING } from "./launch-steps.js";
import { settleLimitsAtExit } from "./limit-watch.js";
import { removeRunRecord } from "./run-records.js";
import { emit } from "./status-report.js";
import type { Supervision } from "./supervision.js";
import { clearTimers, type Tracked } from "./tracked-backend.js";

/** Records the end of a run (only the current one counts) and decides whether it is restarted. */
export function handleExit(
  sup: Supervision,
  t: Tracked,
  generation: number,
  code: number | null,
  signal: string | null,
  spawnError?: string,
): void {
  if (generation !== t.generation) return;
  t.storage?.stop();
  t.storage = null;
  void t.relay?.finished(); // trailing partial line and the drop note, once the pipes close
  clearTimers(t);
  t.running = false;
  t.healthy = false;
  t.exit = { code, signal, at: new Date().toISOString(), ...(t.stopping ? { requested: true } : {}) };
  removeRunRecord(sup.opts.home, t.runKey);
  const name = t.spec.name;
  settleLimitsAtExit(sup, t);
  if (t.stopping) {
    t.reason = "stopped";
    sup.log("info", `app ${name} backend (pid ${t.pid}) stopped`);
    emit(sup, t);
    return;
  }
  const how = describeExit(sup, t, code, signal, spawnError);
  t.failedStarts = t.healthyThisRun ? 0 : t.failedStarts + 1;
  sup.log("warning", `app ${name} backend (pid ${t.pid}) ${how}`);
  if (t.limitsReached.includes("storage")) {
    // Started again it would only fill data/ further: it stays down until the owner acts.
    t.gaveUp = true;
    t.reason = `stays down: ${how}; free space in its data/ or raise sandbox.limits.storage_mb, then restart it`;
    sup.log("error", `app ${name} backend ${t.reason}`);
  } else if (t.failedStarts >= sup.opts.maxFailedStarts) {
    t.gaveUp = true;
    t.reason = `stays down: ${t.failedStarts} starts in a row ended before it answered its health check (last: ${how})`;
    sup.log("error", `app ${name} backend ${t.reason}`);
  } else if (sup.held.has(name)) {
    t.reason = `${how}; held, so not restarted`;
  } else {
    t.reason = `${how}; restarting`;
    scheduleRestart(sup, t);
  }
  emit(sup, t);
}

/** How the run ended, in the words its status reason and the log use. */
function describeExit(
  sup: Supervision,
  t: Tracked,
  code: number | null,
  signal: string | null,
  spawnError: string | undefined,
): string {
  const reached = t.limitsReached.map((hit) => LIMIT_WORDS[hit]).join(" and ");
  return !existsSync(t.spec.appDir)
    ? `exited (${signal ? `killed by ${signal}` : `code ${code}`}): ${APP_FOLDER_MISSING}`
    : spawnError
      ? `could not be started: ${spawnError}`
      : reached
        ? `was stopped at ${reached} (${describeLimits(sup.opts.limits)})`
        : signal
          ? `was killed by ${signal}`
          : `exited with code ${code}`;
}

/** Starts the backend again after a delay that doubles with each failed start, capped at watchdogMs. */
export function scheduleRestart(sup: Supervision, t: Tracked): void {
  const delay = Math.min(sup.opts.watchdogMs, sup.opts.restartBackoffMs * 2 ** Math.max(0, t.failedStarts - 1));
  t.restartTimer = setTimeout(() => {
    t.restartTimer = null;
    if (t.running || t.stopping || t.gaveUp || sup.held.has(t.spec.name)) return;
    t.restarts += 1;
    void sup.launch(t).then((launched) => {
      if (!launched.ok) {
        t.reason = `restart failed: ${launched.code}: ${launched.reason}`;
        sup.log("error", `app ${t.spec.name} backend ${t.reason}`);
        sup.onRestartRefused(t.spec.name, launched.code);
        emit(sup, t);
      }
    });
  }, delay);
}
