// Health is a standing, reversible observation of the current run: polled quickly until the
// backend first answers (or its start timeout passes), then every healthIntervalMs, where
// healthMisses misses in a row demote it and one success promotes it again. A probe's answer
// for a run that is over is dropped.
import { backendStartTimeoutMs } from "../../kernel/contracts/manifest-backend-ui.js";
import { endpointOf } from "./backend-address.js";
import { isAcceptableHealthPath, probeHealth } from "./health-probe.js";
import { emit, linesMoved } from "./status-report.js";
import type { Supervision } from "./supervision.js";
import { later, type Tracked } from "./tracked-backend.js";

/** Polls the new run's health check until it first answers, then hands it to the standing watch. */
export function startupPoll(sup: Supervision, t: Tracked, generation: number): void {
  const healthPath = t.spec.backend.healthCheck ?? "/health";
  if (!isAcceptableHealthPath(healthPath)) {
    if (!sup.warnedHealthPaths.has(healthPath)) {
      sup.warnedHealthPaths.add(healthPath);
      sup.log(
        "warning",
        `app ${t.spec.name}: healthCheck ${JSON.stringify(healthPath)} is not an absolute path of [A-Za-z0-9/_.~-]; the backend is treated as unhealthy`,
      );
    }
    t.reason = "healthCheck path refused; treated as unhealthy";
    emit(sup, t);
    return;
  }
  const { opts } = sup;
  // The manifest's own start timeout, else the supervisor's (the default of kernel/contracts).
  const startTimeoutMs =
    t.spec.backend.startTimeoutSeconds === undefined ? opts.startTimeoutMs : backendStartTimeoutMs(t.spec.backend);
  const deadline = Date.now() + startTimeoutMs;
  const tick = async () => {
    if (generation !== t.generation || !t.running) return;
    const answer = await probeHealth(endpointOf(sup, t), healthPath, opts.probeTimeoutMs, t.masked);
    if (generation !== t.generation || !t.running) return;
    if (answer.ok) {
      markHealthy(sup, t);
      watch(sup, t, generation, healthPath);
      return;
    }
    t.lastMiss = answer.miss;
    if (Date.now() >= deadline) {
      t.reason = `did not answer GET ${healthPath} with 2xx within ${Math.round(startTimeoutMs / 1000)} s; last it ${answer.miss}`;
      sup.log("warning", `app ${t.spec.name} backend ${t.reason}`);
      emit(sup, t);
      watch(sup, t, generation, healthPath);
      return;
    }
    later(t, opts.startupPollMs, tick);
  };
  later(t, Math.min(opts.startupPollMs, 100), tick);
}

/** The standing watch: every healthIntervalMs; healthMisses misses in a row demote, one success promotes. */
function watch(sup: Supervision, t: Tracked, generation: number, healthPath: string): void {
  const { opts } = sup;
  let misses = 0;
  const tick = async () => {
    if (generation !== t.generation || !t.running) return;
    const answer = await probeHealth(endpointOf(sup, t), healthPath, opts.probeTimeoutMs, t.masked);
    if (generation !== t.generation || !t.running) return;
    if (answer.ok) {
      misses = 0;
      if (!t.healthy) markHealthy(sup, t);
      // The last lines the owner reads are reported again once they moved, at most once an interval.
      else if (linesMoved(t)) emit(sup, t);
    } else {
      misses += 1;
      t.lastMiss = answer.miss;
      if (misses >= opts.healthMisses && t.healthy) {
        t.healthy = false;
        t.reason = `missed ${misses} health checks in a row; last it ${answer.miss}`;
        sup.log("warning", `app ${t.spec.name} backend ${t.reason}`);
        emit(sup, t);
      }
    }
    later(t, opts.healthIntervalMs, tick);
  };
  later(t, opts.healthIntervalMs, tick);
}

/** A healthy answer ends a run's count of failed starts and clears its reason. */
function markHealthy(sup: Supervision, t: Tracked): void {
  t.healthy = true;
  t.healthyThisRun = true;
  t.failedStarts = 0;
  t.reason = undefined;
  emit(sup, t);
}
