// Live events: 200 sockets, 1 000 events/s for --duration s, delivery latency per frame per
// socket, through the product's /api/ws and EventHub (owner sockets; the frame passes the scope
// filter) against a bare workerd Durable Object doing the same fan-out, and a bare one-socket
// echo round trip, all in this run. The product is started from the test build so the bench can
// publish through POST /api/test/events/publish (the only door that takes any frame at this rate).
import { mkdirSync, mkdtempSync } from "node:fs";
import { join } from "node:path";
import { benchWorkers, loopbackListen, minimalConfig, startWorkerd } from "../lib/workerd.mjs";
import { startPersonalclaw, testBuildCliPath } from "../lib/gateway.mjs";
import { measureEcho, measureFanout } from "../lib/fanout-load.mjs";

const EVENT_SOCKETS = 200;
/** The load, and a tenth of it: on a small machine the first saturates it, the second shows the path's own latency. */
const EVENT_RATES = [1000, 100];

/** The bare fan-out worker and the test-build gateway, both stopped when the section ends. */
async function startEventTargets(bench) {
  const { scratch, cleanups } = bench;
  const bare = await loopbackListen();
  const config = join(scratch, "ws-fanout.capnp");
  const stateDir = join(scratch, "ws-fanout-state");
  mkdirSync(stateDir);
  const worker = await startWorkerd({
    configPath: config,
    port: bare.port,
    readyPath: "/ready",
    experimental: true,
    configText: minimalConfig({
      configPath: config,
      listen: bare.listen,
      modules: [{ name: "ws-fanout.js", path: join(benchWorkers, "ws-fanout.js") }],
      durable: { stateDir, namespaces: [{ binding: "HUB", className: "Hub", uniqueKey: "personalclaw-bench-ws-hub" }] },
    }),
  });
  cleanups.push(() => worker.stop());
  const home = mkdtempSync(join(scratch, "events-home-"));
  const gateway = await startPersonalclaw(home, testBuildCliPath);
  cleanups.push(() => gateway.stop());
  return { bare, worker, gateway };
}

/** Measures the product and the bare fan-out at each rate, alternating which goes first, and the echo floor, once per run. */
export async function eventsSection(bench) {
  const { RUNS, DURATION_S, log } = bench;
  const { bare, worker, gateway } = await startEventTargets(bench);
  const frame = (i, t) => JSON.stringify({ type: "backend.health_changed", data: { app: "bench", i, t } });
  const out = { echo: [] };
  for (const rate of EVENT_RATES) {
    out[`product@${rate}`] = [];
    out[`bare@${rate}`] = [];
  }
  for (let r = 0; r < RUNS; r++) {
    for (const rate of EVENT_RATES) {
      for (const target of r % 2 === 0 ? ["product", "bare"] : ["bare", "product"]) {
        log(`run ${r + 1}/${RUNS}: events fan-out, ${target}, ${EVENT_SOCKETS} sockets, ${rate} events/s`);
        const common = { bodyOf: frame, sockets: EVENT_SOCKETS, rate, durationS: DURATION_S };
        const result =
          target === "product"
            ? await measureFanout({
                ...common,
                port: gateway.port,
                wsPath: "/api/ws",
                wsHeaders: gateway.owner,
                publishPath: "/api/test/events/publish",
                publishHeaders: gateway.owner,
                serverPid: gateway.workerdPid,
              })
            : await measureFanout({
                ...common,
                port: bare.port,
                wsPath: "/ws",
                wsHeaders: {},
                publishPath: "/publish",
                publishHeaders: {},
                serverPid: worker.pid,
              });
        out[`${target}@${rate}`].push(result);
      }
    }
    out.echo.push(await measureEcho({ port: bare.port, wsPath: "/ws", n: 2000 }));
  }
  bench.raw.events = { sockets: EVENT_SOCKETS, rates: EVENT_RATES, durationS: DURATION_S, ...out };
  eventFigures(bench, out);
  const lost = Object.entries(out)
    .filter(([key]) => key !== "echo")
    .flatMap(([key, runs]) =>
      runs.filter((x) => x.delivered < x.expected).map((x) => `${key}: ${x.delivered}/${x.expected}`),
    );
  if (lost.length > 0) bench.raw.eventsShortfall = lost;
  await gateway.stop();
  await worker.stop();
}

/** Delivery latency, frames delivered and CPU share at each rate against the bare fan-out, and the light rate against the echo floor. */
function eventFigures(bench, out) {
  const { figure } = bench;
  const col = (key, field) => out[key].map((x) => x[field]);
  for (const rate of EVENT_RATES) {
    const label = `${EVENT_SOCKETS} sockets, ${rate} events/s`;
    const bareLabel = "bare workerd DO fan-out, same load";
    figure(
      "events",
      `delivery p50 ms, ${label}`,
      "ms",
      col(`product@${rate}`, "p50"),
      col(`bare@${rate}`, "p50"),
      bareLabel,
    );
    figure(
      "events",
      `delivery p99 ms, ${label}`,
      "ms",
      col(`product@${rate}`, "p99"),
      col(`bare@${rate}`, "p99"),
      bareLabel,
    );
    figure(
      "events",
      `frames delivered/s, ${label} (${EVENT_SOCKETS * rate} offered)`,
      "frames/s",
      col(`product@${rate}`, "framesPerS"),
      col(`bare@${rate}`, "framesPerS"),
      bareLabel,
    );
    figure(
      "events",
      `workerd CPU share, ${label}`,
      "cores",
      col(`product@${rate}`, "serverCpuShare"),
      col(`bare@${rate}`, "serverCpuShare"),
      bareLabel,
    );
    figure(
      "events",
      `workerd CPU per frame delivered, ${label}`,
      "µs/frame",
      col(`product@${rate}`, "serverCpuUsPerFrame"),
      col(`bare@${rate}`, "serverCpuUsPerFrame"),
      bareLabel,
    );
    figure(
      "events",
      `bench client CPU share, ${label}`,
      "cores",
      col(`product@${rate}`, "clientCpuShare"),
      col(`bare@${rate}`, "clientCpuShare"),
      bareLabel,
    );
  }
  const light = EVENT_RATES[EVENT_RATES.length - 1];
  const echoLabel = "bare workerd WebSocket echo round trip, one socket (the floor of any socket path)";
  figure(
    "events",
    `delivery p50 ms, ${EVENT_SOCKETS} sockets, ${light} events/s`,
    "ms",
    col(`product@${light}`, "p50"),
    col("echo", "p50"),
    echoLabel,
  );
  figure(
    "events",
    `delivery p99 ms, ${EVENT_SOCKETS} sockets, ${light} events/s`,
    "ms",
    col(`product@${light}`, "p99"),
    col("echo", "p99"),
    echoLabel,
  );
}
