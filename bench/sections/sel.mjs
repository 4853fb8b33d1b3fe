// Security log: sustained appends per second through the bench's benchAppend, chained vs not,
// and workerd's CPU time per row on each side (read from schedstat around every call).
// The chained loop is the product's append: the HMAC chain under the current epoch's key, the
// keyless root's leaf per row, and an Ed25519-signed checkpoint every 1000 rows (5 per call).
import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { cpuMeter, httpGet, msSince } from "../lib/procs.mjs";
import { buildBenchWorker, loopbackListen, minimalConfig, startWorkerd } from "../lib/workerd.mjs";

const PER_CALL = 2_000;
const PAIRS = 10;

/** The bench's SecurityLog worker (bench/workers/sel-bench.ts) on its own workerd. */
async function startSelWorker(bench) {
  const { scratch } = bench;
  const sl = await loopbackListen();
  const config = join(scratch, "sel-bench.capnp");
  const stateDir = join(scratch, "sel-state");
  mkdirSync(stateDir);
  const worker = await startWorkerd({
    configPath: config,
    port: sl.port,
    readyPath: "/ready",
    experimental: false,
    configText: minimalConfig({
      configPath: config,
      listen: sl.listen,
      modules: [{ name: "sel-bench.js", path: await buildBenchWorker("sel-bench.ts", join(scratch, "sel-bench.js")) }],
      bindings: { SEL_KEY: createHash("sha256").update("personalclaw bench key").digest("hex") },
      durable: {
        stateDir,
        namespaces: [
          { binding: "SECURITY_LOG", className: "BenchSecurityLog", uniqueKey: "personalclaw-bench-security-log" },
        ],
      },
    }),
  });
  bench.cleanups.push(() => worker.stop());
  return { worker, port: sl.port };
}

/** Times PAIRS alternating chained and unchained calls of PER_CALL rows per run, each side in fresh objects. */
export async function selSection(bench) {
  const { RUNS, log, figure } = bench;
  const { worker, port } = await startSelWorker(bench);
  const out = { chained: [], unchained: [], chainedCpuUs: [], unchainedCpuUs: [], callRoundTripMs: [] };
  const call = async (object, n, chained) => {
    const answer = await httpGet(port, `/append?object=${object}&n=${n}&chained=${chained ? 1 : 0}`, {}, 60_000);
    if (answer.status !== 200) throw new Error(`benchAppend answered ${answer.status}: ${answer.body}`);
    return JSON.parse(answer.body);
  };
  // Chained and unchained calls alternate, each timed from outside, so a neighbour's load on
  // this shared machine lands on both sides of the ratio alike.
  for (let r = 0; r < RUNS; r++) {
    log(`run ${r + 1}/${RUNS}: security log, chained and unchained alternating`);
    const chainedObject = `bench-r${r}-chained`;
    const plainObject = `bench-r${r}-plain`;
    await call(chainedObject, 1, true); // opens the objects (schema, keys) outside the timing
    await call(plainObject, 1, false);
    const elapsed = { chained: 0, unchained: 0 };
    // workerd's own CPU time (schedstat, all its threads): on a shared machine it moves far less than wall time.
    const cpuNs = { chained: 0, unchained: 0 };
    let rows = 0;
    for (let i = 0; i < PAIRS; i++) {
      for (const chained of i % 2 === 0 ? [true, false] : [false, true]) {
        const side = chained ? "chained" : "unchained";
        const cpu = cpuMeter([worker.pid]);
        const started = process.hrtime.bigint();
        const answer = await call(chained ? chainedObject : plainObject, PER_CALL, chained);
        elapsed[side] += msSince(started);
        cpuNs[side] += cpu.ns();
        if (chained) rows += answer.n;
      }
    }
    out.chained.push(rows / (elapsed.chained / 1000));
    out.unchained.push(rows / (elapsed.unchained / 1000));
    out.chainedCpuUs.push(cpuNs.chained / 1000 / rows);
    out.unchainedCpuUs.push(cpuNs.unchained / 1000 / rows);
    const started = process.hrtime.bigint();
    await call(chainedObject, 1, true);
    out.callRoundTripMs.push(msSince(started));
  }
  bench.raw.sel = { ...out, rowsPerCall: PER_CALL, pairsPerRun: PAIRS };
  figure(
    "sel",
    "appends/s with epoch keys, the chain and a checkpoint every 1000 rows",
    "rows/s",
    out.chained,
    out.unchained,
    "same append without the chain",
  );
  figure(
    "sel",
    "workerd CPU per row (schedstat), the same chained append",
    "µs/row",
    out.chainedCpuUs,
    out.unchainedCpuUs,
    "same append without the chain",
  );
}
