// Start and memory: `personalclaw start` on a home with no apps (started once before) to the first 200 of /api/status and to
// its ready line, the CPU it used by the first 200, and its idle RSS, against the runtime
// section's bare workerd and Node servers. Start with 30 installed apps is section start30.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { startPersonalclaw } from "../lib/gateway.mjs";
import { gatewayRss } from "../lib/gateway-memory.mjs";

/** `runtime` is what runtimeStartups (sections/runtime.mjs) measured in this run. */
export async function startSection(bench, runtime) {
  const { RUNS, scratch, cleanups, log } = bench;
  const out = { firstStatusMs: [], readyMs: [], cpuToFirstStatusMs: [], cpuToFirstStatusByNameMs: [], idle: [] };
  for (let r = 0; r < RUNS; r++) {
    log(`run ${r + 1}/${RUNS}: start and memory`);
    const home = join(scratch, `start-home-${r}`);
    mkdirSync(home);
    // A home's first start also makes what a home keeps (its state, its 32 MiB disk reserve):
    // the start measured is an owner's usual one, of a home that has started before.
    await (await startPersonalclaw(home)).stop();
    const gateway = await startPersonalclaw(home);
    cleanups.push(() => gateway.stop());
    out.firstStatusMs.push(gateway.firstStatusMs);
    out.readyMs.push(gateway.readyMs);
    out.cpuToFirstStatusMs.push(gateway.cpuToFirstStatusNs / 1e6);
    out.cpuToFirstStatusByNameMs.push(
      Object.fromEntries(Object.entries(gateway.cpuToFirstStatusByName).map(([name, ns]) => [name, ns / 1e6])),
    );
    await new Promise((r2) => setTimeout(r2, 2_000));
    out.idle.push(gatewayRss(gateway));
    await gateway.stop();
  }
  bench.raw.start = out;
  startFigures(bench, out, runtime);
}

/** Start times against a bare workerd hello, and idle RSS against the bare floors. */
function startFigures(bench, out, runtime) {
  const { figure } = bench;
  const MiB = (xs) => xs.map((x) => x / 1024);
  const bare = "raw workerd serve, hello, first 200";
  figure(
    "start",
    "personalclaw start -> first 200 of /api/status",
    "ms",
    out.firstStatusMs,
    runtime.minimal.startMs,
    bare,
  );
  figure("start", "personalclaw start -> ready line", "ms", out.readyMs, runtime.minimal.startMs, bare);
  figure("start", "CPU used by the first 200 (CLI, bridge, workerd)", "ms CPU", out.cpuToFirstStatusMs, null, null);
  const floor = runtime.minimal.rssKiB.map((w, i) => w + (runtime.node.rssKiB[i] ?? runtime.node.rssKiB[0]));
  figure(
    "start",
    "RSS workerd + bridge, idle",
    "MiB",
    MiB(out.idle.map((x) => x.gateway)),
    MiB(floor),
    "bare workerd (hello) + bare Node HTTP server",
  );
}
