// Backend start: spawn to healthy for a confined backend (with and without its bounds) against
// the sandbox's previous shape and the same supervisor with sandbox.mode off.
import { measureBackendStarts } from "../lib/backend-start.mjs";

/** Measures at least 5 starts of each kind, whatever --runs says. */
export async function backendsSection(bench) {
  const { RUNS, scratch, log, figure } = bench;
  log("backend start: confined, unsandboxed and the previous sandbox shape");
  const starts = await measureBackendStarts(scratch, Math.max(RUNS, 5));
  bench.raw.backendStarts = starts;
  figure(
    "backends",
    "backend spawn -> healthy, confined + bounded",
    "ms",
    starts.confined,
    starts.previousShape,
    "bwrap --ro-bind / / (the sandbox before confinement)",
  );
  figure(
    "backends",
    "backend spawn -> healthy, confined, no bounds",
    "ms",
    starts.confinedUnbounded,
    starts.previousShape,
    "bwrap --ro-bind / / (the sandbox before confinement)",
  );
  figure(
    "backends",
    "backend spawn -> healthy, confined + bounded",
    "ms",
    starts.confined,
    starts.unsandboxed,
    "the same supervisor, sandbox.mode off",
  );
  const cpu = "CPU per backend start, spawn -> healthy (supervisor + the processes it started)";
  figure(
    "backends",
    `${cpu}, confined + bounded`,
    "ms CPU",
    starts.cpuMs.confined,
    starts.cpuMs.previousShape,
    "bwrap --ro-bind / / (the sandbox before confinement)",
  );
  figure(
    "backends",
    `${cpu}, confined + bounded`,
    "ms CPU",
    starts.cpuMs.confined,
    starts.cpuMs.unsandboxed,
    "the same supervisor, sandbox.mode off",
  );
}
