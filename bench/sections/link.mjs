// The edge's link: an app backend's request through the worker on Cloudflare's runtime (Miniflare,
// as `wrangler dev` runs it, in edge mode over https) and the machine's link, against the same
// request on loopback through the machine's own gateway, in the same run on the same machine and
// machine. Two copies of node-notes run side by side, one installed through the edge and one
// locally; GET /apps/<name>/api/echo, one request at a time on a kept-alive connection, the two
// ways alternating in blocks. p50/p99 per run, and CPU per request of every process the bench
// started (the edge's workerd, both gateways' bridges and workerd, the backends), the client aside.
// The loopback way runs in a plain local start of its own: under --edge a machine's apps are the edge's.
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { Agent, fetch } from "undici";
import { copyNodeNotesAs, installApp, startPersonalclaw, waitHealthy } from "../lib/gateway.mjs";
import { importProductModules } from "../lib/product-modules.mjs";
import { cpuMeter, descendants, pollUntil } from "../lib/procs.mjs";
import { repoRoot } from "../lib/workerd.mjs";

const ORIGIN = "https://claw.example";
const REQUESTS_PER_BLOCK = 100;
const BLOCKS_PER_RUN = 6;
const WARMUP = 200;

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** A sign-in token for the edge, minted over a short link of the paired machine (as `token --edge` does). */
async function edgeOwnerToken(m, home, dispatcher) {
  const record = m.readEdgeRecord(join(home, "edge.json"));
  const link = m.startEdgeLink({
    record: record.value,
    bridgeUrl: "",
    secret: "",
    dispatcher,
    log: () => undefined,
    serves: false,
  });
  try {
    await link.linked();
    const answer = await link.callGateway("POST", "/api/auth/startup-link", "cli:token", {});
    return new URL(JSON.parse(answer.body).url).searchParams.get("token");
  } finally {
    link.stop();
  }
}

/** Installs `folder` through the edge (preview, then consent to its digest) and waits for its backend there. */
async function installAtEdge(ask, folder, name) {
  const preview = await ask("/api/apps/preview", { method: "POST", body: { source: folder } });
  const installed = await ask("/api/apps", { method: "POST", body: { source: folder, consent: preview.digest } });
  if (!installed.app) throw new Error(`install at the edge failed: ${JSON.stringify(installed)}`);
  await pollUntil(async () => (await ask(`/api/apps/${name}`)).backend?.healthy === true, {
    intervalMs: 200,
    timeoutMs: 60_000,
    what: `a healthy ${name} at the edge`,
  });
}

/** `count` sequential requests through `get`; answers each one's ms. */
async function timed(get, count) {
  const out = [];
  for (let i = 0; i < count; i++) {
    const started = process.hrtime.bigint();
    const answer = await get();
    if (answer.status !== 200) throw new Error(`a measured request answered ${answer.status}`);
    await answer.arrayBuffer();
    out.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return out;
}

/** One run: the two ways alternating in blocks (forwards, then backwards), each with its latencies and the CPU its requests cost. */
async function measureRun(ways) {
  const per = Object.fromEntries(Object.keys(ways).map((w) => [w, { ms: [], cpuNs: 0 }]));
  const names = Object.keys(ways);
  for (let block = 0; block < BLOCKS_PER_RUN; block++) {
    for (const way of block % 2 === 0 ? names : [...names].reverse()) {
      const meter = cpuMeter(descendants(process.pid));
      per[way].ms.push(...(await timed(ways[way], REQUESTS_PER_BLOCK)));
      per[way].cpuNs += meter.ns();
    }
  }
  const summary = {};
  for (const way of names) {
    const sorted = per[way].ms.sort((a, b) => a - b);
    summary[way] = {
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      cpuUsPerRequest: Math.round(per[way].cpuNs / 1000 / sorted.length),
    };
  }
  return summary;
}

export async function linkSection(bench) {
  const { module: m } = await importProductModules("bench-link.mjs", [
    'export { makeTestCertificates } from "./test/helpers/test-ca.ts";',
    'export { startEdgeWorker } from "./test/helpers/edge-worker.ts";',
    'export { edgeDispatcher } from "./host-bridge/edge/edge-dispatcher.ts";',
    'export { startEdgeLink } from "./host-bridge/edge/edge-link.ts";',
    'export { readEdgeRecord } from "./host-bridge/edge/edge-record.ts";',
    'export { pairWithEdge } from "./host-bridge/edge/edge-pair.ts";',
  ]);
  const certs = m.makeTestCertificates({ names: ["claw.example"] });
  const pairingSecret = randomBytes(24).toString("hex");
  const { edge, port: edgePort } = await m.startEdgeWorker({
    repoRoot,
    origin: ORIGIN,
    certs,
    pairingSecret,
    internalSecret: randomBytes(32).toString("hex"),
  });
  bench.cleanups.push(() => edge.dispose());
  const dispatcher = m.edgeDispatcher(`127.0.0.1:${edgePort}`, certs.caPem);
  const home = join(bench.scratch, "link-home");
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const paired = await m.pairWithEdge({
    edgeFile: join(home, "edge.json"),
    edgeAnchorFile: join(home, "edge_sel_anchor.json"),
    url: ORIGIN,
    pairingSecret,
    dispatcher,
  });
  if (!paired.ok) throw new Error(`pairing failed: ${paired.message}`);
  const gateway = await startPersonalclaw(
    home,
    undefined,
    { PERSONALCLAW_EDGE_CONNECT_TO: `127.0.0.1:${edgePort}`, NODE_EXTRA_CA_CERTS: certs.caPath },
    ["--edge"],
  );
  bench.cleanups.push(() => gateway.stop());
  // The loopback way: a plain local start of its own (under --edge the machine's apps are the edge's).
  const plain = await startPersonalclaw(join(bench.scratch, "link-local-home"));
  bench.cleanups.push(() => plain.stop());
  await installApp(plain, copyNodeNotesAs(join(bench.scratch, "notes-local"), "notes-local"));
  await waitHealthy(plain, ["notes-local"]);
  const token = await edgeOwnerToken(m, home, dispatcher);
  const ask = async (path, init = {}) => {
    const answer = await fetch(`${ORIGIN}${path}`, {
      method: init.method ?? "GET",
      dispatcher,
      headers: {
        authorization: `Bearer ${token}`,
        ...(init.body ? { "content-type": "application/json", origin: ORIGIN } : {}),
      },
      body: init.body ? JSON.stringify(init.body) : undefined,
    });
    return answer.json();
  };
  await installAtEdge(ask, copyNodeNotesAs(join(bench.scratch, "notes-edge"), "notes-edge"), "notes-edge");

  const loopback = new Agent({ connections: 1 });
  bench.cleanups.push(() => loopback.close());
  const ways = {
    link: () =>
      fetch(`${ORIGIN}/apps/notes-edge/api/echo`, { dispatcher, headers: { authorization: `Bearer ${token}` } }),
    loopback: () =>
      fetch(`http://127.0.0.1:${plain.port}/apps/notes-local/api/echo`, {
        dispatcher: loopback,
        headers: { authorization: `Bearer ${plain.token}` },
      }),
  };
  for (const way of Object.values(ways)) await timed(way, WARMUP);
  const runs = [];
  for (let run = 0; run < bench.RUNS; run++) runs.push(await measureRun(ways));
  bench.raw.link = runs;
  const through = "a proxied GET through the edge's link (https to Miniflare, the link, the bridge, the backend)";
  const base = "the same GET on loopback through a plain local start";
  for (const [read, label, unit] of [
    [(r) => r.p50, "p50", "ms"],
    [(r) => r.p99, "p99", "ms"],
    [(r) => r.cpuUsPerRequest, "CPU per request, every process but the client", "us"],
  ])
    bench.figure(
      "link",
      `${through}, ${label}`,
      unit,
      runs.map((r) => read(r.link)),
      runs.map((r) => read(r.loopback)),
      base,
    );
}
