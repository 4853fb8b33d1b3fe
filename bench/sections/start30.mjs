// Start with 30 installed apps: `personalclaw start` on a home holding 30 copies of node-notes
// (each with its backend) to the first 200 of /api/status and to every backend healthy, the CPU
// the gateway used to get there, and the RSS of workerd + bridge and per app backend, against
// the same start on a home holding none. The homes are made once (the installs are not timed);
// each run starts one and then the other, the order reversed every other run.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { msSince } from "../lib/procs.mjs";
import { copyNodeNotesAs, installApp, startPersonalclaw, treeCpuNs, waitHealthy } from "../lib/gateway.mjs";
import { gatewayRss } from "../lib/gateway-memory.mjs";

const APPS = 30;

/** A home with `names` installed (and one started once empty), both warmed by a first start that is not counted. */
async function prepareHomes(bench, names) {
  const { scratch, cleanups, log } = bench;
  const appsDir = join(scratch, "thirty-apps");
  const homes = { none: join(scratch, "start30-home-none"), thirty: join(scratch, "start30-home-thirty") };
  mkdirSync(homes.none);
  mkdirSync(homes.thirty);
  log(`start30: installing ${APPS} copies of node-notes (not timed)`);
  const gateway = await startPersonalclaw(homes.thirty);
  cleanups.push(() => gateway.stop());
  // Three installs at a time: the installs are not what is measured, only how long the bench takes.
  const queue = [...names];
  await Promise.all(
    Array.from({ length: 3 }, async () => {
      for (let name = queue.shift(); name !== undefined; name = queue.shift())
        await installApp(gateway, copyNodeNotesAs(join(appsDir, name), name));
    }),
  );
  await waitHealthy(gateway, names, 120_000);
  await gateway.stop();
  const empty = await startPersonalclaw(homes.none);
  cleanups.push(() => empty.stop());
  await empty.stop();
  return homes;
}

/** One start of `home`: first 200, then (with apps) every backend healthy; CPU and RSS at each. */
async function measureStart(bench, home, names) {
  const gateway = await startPersonalclaw(home);
  bench.cleanups.push(() => gateway.stop());
  const out = {
    firstStatusMs: gateway.firstStatusMs,
    cpuToFirstStatusMs: gateway.cpuToFirstStatusNs / 1e6,
    cpuToFirstStatusByNameMs: Object.fromEntries(
      Object.entries(gateway.cpuToFirstStatusByName).map(([name, ns]) => [name, ns / 1e6]),
    ),
  };
  if (names.length > 0) {
    await waitHealthy(gateway, names, 120_000);
    out.allHealthyMs = msSince(gateway.startedAt);
    out.cpuToAllHealthyMs = treeCpuNs(gateway.child.pid) / 1e6;
  }
  await new Promise((r) => setTimeout(r, 2_000));
  out.rss = gatewayRss(gateway);
  await gateway.stop();
  return out;
}

export async function start30Section(bench) {
  const { RUNS, log, figure } = bench;
  const names = Array.from({ length: APPS }, (_, i) => `bench-app-${String(i + 1).padStart(2, "0")}`);
  const homes = await prepareHomes(bench, names);
  const runs = { none: [], thirty: [] };
  for (let r = 0; r < RUNS; r++) {
    for (const which of r % 2 === 0 ? ["thirty", "none"] : ["none", "thirty"]) {
      log(`run ${r + 1}/${RUNS}: start with ${which === "none" ? "no apps" : `${APPS} apps`}`);
      runs[which].push(await measureStart(bench, homes[which], which === "none" ? [] : names));
    }
  }
  bench.raw.start30 = runs;
  const col = (which, pick) => runs[which].map(pick);
  const none = "the same start, no apps installed";
  const MiB = 1024;
  const vsNone = (name, unit, pick, basePick = pick, label = none) =>
    figure("start30", name, unit, col("thirty", pick), col("none", basePick), label);
  vsNone(`start -> first 200 of /api/status, ${APPS} apps`, "ms", (x) => x.firstStatusMs);
  vsNone(
    `CPU used by the first 200, ${APPS} apps (CLI, bridge, workerd, backends)`,
    "ms CPU",
    (x) => x.cpuToFirstStatusMs,
  );
  vsNone(
    `start -> all ${APPS} backends healthy`,
    "ms",
    (x) => x.allHealthyMs,
    (x) => x.firstStatusMs,
    `${none}, first 200`,
  );
  figure(
    "start30",
    `CPU used by all ${APPS} healthy, per app`,
    "ms CPU",
    col("thirty", (x) => (x.cpuToAllHealthyMs - x.cpuToFirstStatusMs) / APPS),
    null,
    null,
  );
  vsNone(`RSS workerd + bridge, ${APPS} apps running`, "MiB", (x) => x.rss.gateway / MiB);
  const perApp = runs.thirty.map((x, i) => (x.rss.gateway - runs.none[i].rss.gateway) / APPS / MiB);
  figure("start30", "RSS workerd + bridge added per app", "MiB", perApp, null, null);
  figure(
    "start30",
    "RSS per app backend (node + bwrap)",
    "MiB",
    col("thirty", (x) => x.rss.backends / APPS / MiB),
    null,
    null,
  );
}
