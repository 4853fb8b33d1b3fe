// Secrets an app never holds: the latency a small request gains when the egress broker opens
// TLS to the secret's origin and writes the value (a plain-HTTP request from the app), against
// the app doing TLS itself through a CONNECT tunnel to the same origin, in the same run. Both
// make a fresh connection per request (the broker dials per request); the app reusing its own
// tunnel (keep-alive) is the third line. p50 and p99 at 1 and 10 connections.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { msSince } from "../lib/procs.mjs";
import {
  loadEgressBundle,
  originatedRequest,
  startChild,
  tunnelledRequest,
  tunnellingAgent,
} from "../lib/secret-origin.mjs";

const HOST = "127.0.0.2";

/** Latencies (ms) of requests made by `connections` loops, each one request at a time, for `seconds`. */
async function latencies(connections, seconds, request) {
  const out = [];
  const until = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < until) {
        const started = process.hrtime.bigint();
        await request();
        out.push(msSince(started));
      }
    }),
  );
  return out;
}

function percentile(values, p) {
  const xs = [...values].sort((a, b) => a - b);
  return xs.length === 0 ? null : xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
}

/** The origin, the broker with a placeholder secret for it, and the three ways of reaching it. */
async function setUp(bench) {
  const { bundle, egress } = await loadEgressBundle();
  const certs = egress.makeTestCertificates({ addresses: [HOST] });
  bench.cleanups.push(async () => rmSync(certs.dir, { recursive: true, force: true }));
  const upstream = await startChild(bench, "upstream", { key: certs.key, cert: certs.cert, host: HOST });
  const port = upstream.ready.port;
  const placeholder = egress.newPlaceholder();
  const broker = await startChild(bench, "broker", {
    bundle,
    socketPath: join(bench.scratch, "bench-egress.sock"),
    grant: [`${HOST}:${port}`],
    origin: `https://${HOST}:${port}`,
    caPath: certs.caPath,
    placeholder,
    value: "sk-bench-0123456789abcdef0123456789",
  });
  const socketPath = broker.ready.socketPath;
  const url = `http://${HOST}:${port}/`;
  return {
    originated: () => originatedRequest(socketPath, url, placeholder),
    tunnelledFresh: () => tunnelledRequest(tunnellingAgent(socketPath, HOST, port, certs.caPem, false), HOST, port),
    tunnelledKept: (agent) => () => tunnelledRequest(agent, HOST, port),
    keptAgent: () => tunnellingAgent(socketPath, HOST, port, certs.caPem, true),
  };
}

/** Measures each way at 1 and 10 connections, alternating which goes first in each run. */
export async function secretsSection(bench) {
  const { RUNS, LATENCY_DURATION_S, log, figure } = bench;
  const ways = await setUp(bench);
  const raw = {};
  for (const connections of [1, 10]) {
    const runs = { originated: [], tunnelledFresh: [], tunnelledKept: [] };
    for (let r = 0; r < RUNS; r++) {
      log(`run ${r + 1}/${RUNS}: secret origin at ${connections} connection(s)`);
      const kept = ways.keptAgent();
      const order =
        r % 2 === 0
          ? ["originated", "tunnelledFresh", "tunnelledKept"]
          : ["tunnelledKept", "tunnelledFresh", "originated"];
      for (const way of order) {
        const request = way === "tunnelledKept" ? ways.tunnelledKept(kept) : ways[way];
        await latencies(connections, 0.3, request); // warm-up, not counted
        runs[way].push(await latencies(connections, LATENCY_DURATION_S, request));
      }
      kept.destroy();
    }
    raw[connections] = Object.fromEntries(
      Object.entries(runs).map(([way, lists]) => [
        way,
        lists.map((l) => ({ n: l.length, p50: percentile(l, 50), p99: percentile(l, 99) })),
      ]),
    );
    for (const p of [50, 99]) {
      const of = (way) => runs[way].map((l) => percentile(l, p));
      const at = `${connections} connection${connections === 1 ? "" : "s"}`;
      figure(
        "secrets",
        `request with the broker's TLS and the secret written, p${p}, ${at}`,
        "ms",
        of("originated"),
        of("tunnelledFresh"),
        "the app's own TLS through CONNECT, a tunnel per request",
      );
      figure(
        "secrets",
        `request with the broker's TLS and the secret written, p${p}, ${at}`,
        "ms",
        of("originated"),
        of("tunnelledKept"),
        "the app's own TLS through CONNECT, its tunnel kept alive",
      );
    }
  }
  bench.raw.secretOrigin = raw;
}
