// Load runs: autocannon in a child process (a second process on loopback), bounded by duration.
// The proxy, auth, tail and runtime sections share one set of runs: each run visits every target
// once, in an order rotated per run, so drift on a shared machine lands on subject and baseline
// alike. Each section then reads its figures from those runs.
import { summarize } from "../lib/stats.mjs";
import { cpuMeter, msSince, schedNs } from "../lib/procs.mjs";
import { runLoad } from "../lib/load.mjs";
import { startLoadTargets } from "./load-targets.mjs";

/** Targets whose tail (p99, max under heavy load) the tail section reads. */
const TAIL_IDS = new Set(["gateway-status", "gateway-sessions", "hello-product-config"]);

/** Runs the load sections the bench wants and records their figures. */
export async function loadSections(bench) {
  const targets = await startLoadTargets(bench);
  const runs = await runTargets(bench, targets);
  bench.raw.load = runs;
  const { wants } = bench;
  if (wants("proxy")) proxyFigures(bench, runs);
  if (wants("auth"))
    loadFigures(bench, runs, "auth", "gateway-status", "hello-product-config", "hello, same runtime path");
  if (wants("tail")) tailFigures(bench, runs);
  if (wants("runtime"))
    loadFigures(
      bench,
      runs,
      "runtime",
      "hello-product-config",
      "hello-minimal-config",
      "hello, hand-written minimal config",
    );
  const bad = Object.entries(runs).flatMap(([id, r]) =>
    [...r.loaded, ...r.single]
      .filter((x) => x.non2xx > 0 || x.errors > 0)
      .map((x) => `${id}: ${x.non2xx} non-2xx, ${x.errors} errors`),
  );
  if (bad.length > 0) bench.raw.loadWarnings = bad;
}

/** Every run visits every target, in an order rotated per run; answers each target's measurements. */
async function runTargets(bench, targets) {
  const { RUNS, DURATION_S, LATENCY_DURATION_S, CONNECTIONS, TAIL_CONNECTIONS, wants } = bench;
  const runs = Object.fromEntries(
    targets.map((t) => [t.id, { loaded: [], single: [], tail: [], tailWait: [], cpuUs: [] }]),
  );
  const standard = wants("proxy") || wants("auth") || wants("runtime");
  for (let r = 0; r < RUNS; r++) {
    const order = targets.map((_, i) => targets[(i + r) % targets.length]);
    for (const target of order) {
      bench.log(`run ${r + 1}/${RUNS}: ${target.id}`);
      if (standard && target.id !== "gateway-sessions") {
        // workerd's own CPU per request (its threads' on-CPU time), read across the loaded run.
        const cpu = target.pid ? cpuMeter([target.pid]) : null;
        const loaded = await runLoad(target, { connections: CONNECTIONS, duration: DURATION_S, warmup: 1 });
        runs[target.id].loaded.push(loaded);
        if (cpu) runs[target.id].cpuUs.push(cpu.ns() / 1000 / loaded.requests);
        runs[target.id].single.push(
          await runLoad(target, { connections: 1, duration: LATENCY_DURATION_S, warmup: 0.5 }),
        );
      }
      if (wants("tail") && TAIL_IDS.has(target.id)) {
        // How long workerd sat runnable without a CPU: a stall the machine's run queue made.
        const before = schedNs(target.pid);
        const started = process.hrtime.bigint();
        runs[target.id].tail.push(
          await runLoad(target, { connections: TAIL_CONNECTIONS, duration: DURATION_S, warmup: 1 }),
        );
        const waited = (schedNs(target.pid).waiting - before.waiting) / 1e6;
        runs[target.id].tailWait.push((100 * waited) / msSince(started));
      }
    }
  }
  return runs;
}

/** One field of every run of one kind for a target; null for a target not started. */
function pick(runs, id, kind, field) {
  return runs[id] ? runs[id][kind].map((x) => x[field]) : null;
}

/** req/s and p50/p99 latency (one connection and loaded) of a subject against a baseline. */
function loadFigures(bench, runs, section, subjectId, baselineId, label) {
  const { CONNECTIONS, figure } = bench;
  if (!runs[subjectId] || !runs[baselineId]) return;
  figure(
    section,
    `req/s, ${CONNECTIONS} connections`,
    "req/s",
    pick(runs, subjectId, "loaded", "rps"),
    pick(runs, baselineId, "loaded", "rps"),
    label,
  );
  if (runs[subjectId].cpuUs.length > 0 && runs[baselineId].cpuUs.length > 0 && section !== "proxy")
    figure(
      section,
      `workerd CPU per request, ${CONNECTIONS} connections`,
      "µs/request",
      runs[subjectId].cpuUs,
      runs[baselineId].cpuUs,
      label,
    );
  for (const [kind, tag] of [
    ["single", "1 connection"],
    ["loaded", `${CONNECTIONS} connections`],
  ]) {
    for (const q of ["p50", "p99"]) {
      const s = pick(runs, subjectId, kind, q);
      const b = pick(runs, baselineId, kind, q);
      const added =
        summarize(s).median !== null && summarize(b).median !== null ? summarize(s).median - summarize(b).median : null;
      figure(section, `${q} ms, ${tag}`, "ms", s, b, label, q === "p50" ? { addedMs: added } : {});
    }
  }
}

/** The proxy against each baseline, and workerd's CPU per request on each side. */
function proxyFigures(bench, runs) {
  const { CONNECTIONS, figure } = bench;
  const proxy = (subjectId, baselineId, label) => loadFigures(bench, runs, "proxy", subjectId, baselineId, label);
  proxy("gateway-proxy", "gateway-proxy-tcp", "the same proxy to a backend on loopback TCP (before egress)");
  proxy("gateway-proxy", "backend-direct", "backend direct");
  proxy("gateway-proxy", "workerd-passthrough-slot", "bare workerd pass-through, the same socket slot");
  proxy("gateway-proxy", "workerd-passthrough", "bare workerd pass-through, loopback TCP");
  proxy(
    "gateway-proxy",
    "forward-duties-slot",
    "the forward duties alone (signature, header rules, bounded wait, inert answer), same slot",
  );
  proxy(
    "forward-duties-slot",
    "workerd-passthrough-slot",
    "bare workerd pass-through, the same socket slot (subject: the forward duties alone)",
  );
  for (const [subject, baseline, label] of [
    ["gateway-proxy", "workerd-passthrough-slot", "bare workerd pass-through, the same socket slot"],
    ["gateway-proxy", "forward-duties-slot", "the forward duties alone, same slot"],
    ["forward-duties-slot", "workerd-passthrough-slot", "bare pass-through, same slot (subject: the duties alone)"],
  ])
    figure(
      "proxy",
      `workerd CPU per request, ${CONNECTIONS} connections`,
      "µs/request",
      runs[subject].cpuUs,
      runs[baseline].cpuUs,
      label,
    );
  if (runs["nginx-proxy"]) proxy("gateway-proxy", "nginx-proxy", "nginx reverse proxy");
}

/** p99 and max of two owner reads under heavy load beside a bare hello, and workerd's run-queue wait. */
function tailFigures(bench, runs) {
  const { TAIL_CONNECTIONS, figure } = bench;
  for (const subject of ["gateway-status", "gateway-sessions"]) {
    const route = subject === "gateway-status" ? "GET /api/status" : "GET /api/auth/sessions";
    for (const q of ["p99", "max"]) {
      figure(
        "tail",
        `${q} ms, ${TAIL_CONNECTIONS} connections, ${route} (owner)`,
        "ms",
        pick(runs, subject, "tail", q),
        pick(runs, "hello-product-config", "tail", q),
        "bare workerd hello, same run",
      );
    }
    figure(
      "tail",
      `workerd threads runnable without a CPU, % of the run, ${route}`,
      "%",
      runs[subject].tailWait,
      runs["hello-product-config"].tailWait,
      "bare workerd hello, same run",
    );
  }
}
