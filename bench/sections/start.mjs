// Start and memory: `personalclaw start` to the first 200 of /api/status, RSS idle and with
// 10 apps whose backends run, against the runtime section's bare workerd and Node servers.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { descendants, rssKiB } from "../lib/procs.mjs";
import { copyNodeNotesAs, installApp, startPersonalclaw, waitHealthy } from "../lib/gateway.mjs";

/** The RSS of a gateway's workerd, its bridge and the backends the bridge started (outside workerd's tree). */
function rssOf(gateway) {
  const workerd = rssKiB(gateway.workerdPid);
  const bridge = rssKiB(gateway.bridgePid);
  const workerdTree = new Set([gateway.workerdPid, ...descendants(gateway.workerdPid)]);
  const backendPids = descendants(gateway.bridgePid).filter((p) => !workerdTree.has(p));
  const backends = backendPids.reduce((sum, p) => sum + rssKiB(p), 0);
  return { workerd, bridge, gateway: workerd + bridge, backends, backendProcesses: backendPids.length };
}

/** `runtime` is what runtimeStartups (sections/runtime.mjs) measured in this run. */
export async function startSection(bench, runtime) {
  const { RUNS, scratch, cleanups, log } = bench;
  const appsDir = join(scratch, "ten-apps");
  const names = Array.from({ length: 10 }, (_, i) => `bench-app-${String(i + 1).padStart(2, "0")}`);
  for (const name of names) copyNodeNotesAs(join(appsDir, name), name);
  const out = { firstStatusMs: [], readyMs: [], idle: [], tenApps: [] };
  for (let r = 0; r < RUNS; r++) {
    log(`run ${r + 1}/${RUNS}: start and memory`);
    const home = join(scratch, `start-home-${r}`);
    mkdirSync(home);
    const gateway = await startPersonalclaw(home);
    cleanups.push(() => gateway.stop());
    out.firstStatusMs.push(gateway.firstStatusMs);
    out.readyMs.push(gateway.readyMs);
    await new Promise((r2) => setTimeout(r2, 2_000));
    out.idle.push(rssOf(gateway));
    for (const name of names) await installApp(gateway, join(appsDir, name));
    await waitHealthy(gateway, names, 60_000);
    await new Promise((r2) => setTimeout(r2, 2_000));
    out.tenApps.push(rssOf(gateway));
    await gateway.stop();
  }
  bench.raw.start = out;
  startFigures(bench, out, runtime);
}

/** Start times against a bare workerd hello, and RSS idle and with 10 apps against the bare floors. */
function startFigures(bench, out, runtime) {
  const { figure } = bench;
  const MiB = (xs) => xs.map((x) => x / 1024);
  figure(
    "start",
    "personalclaw start -> first 200 of /api/status",
    "ms",
    out.firstStatusMs,
    runtime.minimal.startMs,
    "raw workerd serve, hello, first 200",
  );
  figure(
    "start",
    "personalclaw start -> ready line",
    "ms",
    out.readyMs,
    runtime.minimal.startMs,
    "raw workerd serve, hello, first 200",
  );
  const floor = runtime.minimal.rssKiB.map((w, i) => w + (runtime.node.rssKiB[i] ?? runtime.node.rssKiB[0]));
  figure(
    "start",
    "RSS workerd + bridge, idle",
    "MiB",
    MiB(out.idle.map((x) => x.gateway)),
    MiB(floor),
    "bare workerd (hello) + bare Node HTTP server",
  );
  figure(
    "start",
    "RSS workerd + bridge, 10 apps running",
    "MiB",
    MiB(out.tenApps.map((x) => x.gateway)),
    MiB(out.idle.map((x) => x.gateway)),
    "the same gateway idle",
  );
  figure(
    "start",
    "RSS workerd alone, 10 apps running",
    "MiB",
    MiB(out.tenApps.map((x) => x.workerd)),
    MiB(runtime.minimal.rssKiB),
    "bare workerd (hello)",
  );
  figure(
    "start",
    "RSS per app backend (node + bwrap)",
    "MiB",
    MiB(out.tenApps.map((x) => x.backends / 10)),
    MiB(runtime.node.rssKiB),
    "bare Node HTTP server",
  );
}
