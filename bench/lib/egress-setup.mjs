// What the bench's broker and secrets sections drive: the product's egress broker (TypeScript,
// bundled for this run) with a placeholder secret, a plain HTTP origin and a local TLS origin
// whose certificate comes from a CA made for the run (the tests' own helper, given to the broker
// as egress.extra_ca_certs), and the client making the requests being compared
// (egress-clients.mjs): each in its own child process (egress-child.mjs), so each one's CPU is
// its own and is read from /proc around every measurement.
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { importProductModules } from "./product-modules.mjs";
import { cpuMeter, stopChild } from "./procs.mjs";
import { summarize } from "./stats.mjs";
import { repoRoot } from "./workerd.mjs";

const HOST = "127.0.0.2";

/** Bundles what the section needs of the product and of the tests' CA helper; answers the bundle's path and module. */
export async function loadEgressBundle() {
  const { file, module } = await importProductModules("bench-egress.mjs", [
    'export { startBroker } from "./host-bridge/egress/broker.ts";',
    'export { loadOriginTrust } from "./host-bridge/egress/origin-tls.ts";',
    'export { newPlaceholder } from "./host-bridge/egress/secret-placeholders.ts";',
    'export { parseSecretOrigin } from "./kernel/contracts/secret-delivery.ts";',
    'export { parseHostPattern } from "./kernel/rules/network-grant.ts";',
    'export { makeTestCertificates } from "./test/helpers/test-ca.ts";',
  ]);
  return { bundle: file, egress: module };
}

/** Starts a role of egress-child.mjs; answers the child, its ready line, and a reader of its next lines. */
async function startChild(bench, role, config) {
  const child = spawn(
    process.execPath,
    [join(repoRoot, "bench", "lib", "egress-child.mjs"), role, JSON.stringify(config)],
    {
      stdio: ["pipe", "pipe", "inherit"],
    },
  );
  bench.cleanups.push(() => stopChild(child));
  const waiting = [];
  const lines = [];
  createInterface({ input: child.stdout }).on("line", (line) => {
    const value = JSON.parse(line);
    const next = waiting.shift();
    if (next) next.resolve(value);
    else lines.push(value);
  });
  child.once("exit", (code) => {
    for (const w of waiting.splice(0)) w.reject(new Error(`the ${role} child exited ${code}`));
  });
  const next = () =>
    lines.length > 0
      ? Promise.resolve(lines.shift())
      : new Promise((resolve, reject) => waiting.push({ resolve, reject }));
  const ready = await next();
  return { child, ready, next };
}

/**
 * The origins, the broker (with a placeholder secret for the TLS origin and a grant naming both)
 * and the client, each its own process. `measure(way, connections, seconds)` answers the
 * client's p50/p99 and each process's CPU per request in µs.
 */
export function startEgressRig(bench) {
  // One rig serves both sections of a run: its processes are stopped when the bench ends.
  bench.egressRig ??= makeEgressRig(bench);
  return bench.egressRig;
}

async function makeEgressRig(bench) {
  const { bundle, egress } = await loadEgressBundle();
  const certs = egress.makeTestCertificates({ addresses: [HOST] });
  bench.cleanups.push(async () => rmSync(certs.dir, { recursive: true, force: true }));
  const upstream = await startChild(bench, "upstream", { key: certs.key, cert: certs.cert, host: HOST });
  const plain = await startChild(bench, "plain-upstream", { host: HOST });
  const tlsPort = upstream.ready.port;
  const plainPort = plain.ready.port;
  const placeholder = egress.newPlaceholder();
  const broker = await startChild(bench, "broker", {
    bundle,
    socketPath: join(bench.scratch, "bench-egress.sock"),
    grant: [`${HOST}:${tlsPort}`, `${HOST}:${plainPort}`],
    origin: `https://${HOST}:${tlsPort}`,
    caPath: certs.caPath,
    placeholder,
    value: "sk-bench-0123456789abcdef0123456789",
  });
  const bare = await startChild(bench, "bare-proxy", { socketPath: join(bench.scratch, "bench-bare-proxy.sock") });
  const at = {
    socketPath: broker.ready.socketPath,
    bareSocketPath: bare.ready.socketPath,
    host: HOST,
    plainPort,
    tlsPort,
    caPem: certs.caPem,
    placeholder,
  };
  const client = await startChild(bench, "client", at);
  const pids = { client: client.child.pid, broker: 0, upstream: 0 };
  const measure = async (way, connections, seconds) => {
    pids.upstream = way.startsWith("tunnelled") || way === "originated" ? upstream.child.pid : plain.child.pid;
    // The bare proxy stands where the broker stands, and is read as the broker is.
    pids.broker = way.startsWith("bare-") ? bare.child.pid : broker.child.pid;
    client.child.stdin.write(`${JSON.stringify({ way, connections, seconds })}\n`);
    const phase = await client.next();
    if (phase.error) throw new Error(`egress client, ${way}: ${phase.error}`);
    const meter = cpuMeter([pids.broker, pids.upstream]);
    const result = await client.next();
    if (result.error) throw new Error(`egress client, ${way}: ${result.error}`);
    const cpu = meter.byPid();
    const perRequest = (ns) => ns / 1000 / result.n;
    const cpuUs = {
      client: perRequest(result.cpuNs),
      broker: perRequest(cpu[pids.broker]),
      upstream: perRequest(cpu[pids.upstream]),
    };
    // Without the broker on the path its process is idle: what it shows then is its own idle timers.
    return {
      ...result,
      cpuUs: { ...cpuUs, total: cpuUs.client + cpuUs.upstream + (way.startsWith("direct") ? 0 : cpuUs.broker) },
    };
  };
  return { measure };
}

/**
 * Each of `ways` measured once per run at `connections`, the order reversed every other run
 * (ABAB BABA), so drift on a shared machine lands on subject and baseline alike. Answers each
 * way's list of results, one per run.
 */
export async function measureInterleaved(bench, rig, ways, connections, what) {
  const { RUNS, LATENCY_DURATION_S, log } = bench;
  const runs = Object.fromEntries(ways.map((way) => [way, []]));
  for (let r = 0; r < RUNS; r++) {
    log(`run ${r + 1}/${RUNS}: ${what} at ${connections} connection(s)`);
    for (const way of r % 2 === 0 ? ways : [...ways].reverse())
      runs[way].push(await rig.measure(way, connections, LATENCY_DURATION_S));
  }
  return runs;
}

/** Records p50, p99 and CPU per request (the whole path's, and the broker's own) of `subject` against `baseline`. */
export function egressFigures(bench, section, runs, { subject, baseline, name, label, at, ownBaseline = "upstream" }) {
  const col = (way, pick) => runs[way].map(pick);
  for (const q of ["p50", "p99"]) {
    const s = col(subject, (x) => x[q]);
    const b = col(baseline, (x) => x[q]);
    bench.figure(
      section,
      `${name}, ${q} ms, ${at}`,
      "ms",
      s,
      b,
      label,
      q === "p50" ? { addedMs: summarize(s).median - summarize(b).median } : {},
    );
  }
  bench.figure(
    section,
    `${name}, CPU per request, client + broker + origin, ${at}`,
    "µs/request",
    col(subject, (x) => x.cpuUs.total),
    col(baseline, (x) => x.cpuUs.total),
    label,
  );
  // Beside a direct request the broker is idle: its own CPU is set against the origin's (a Node
  // server answering the same GET); beside a tunnel, against the broker's own CPU piping it.
  bench.figure(
    section,
    `${name}, the broker's own CPU per request, ${at}`,
    "µs/request",
    col(subject, (x) => x.cpuUs.broker),
    col(baseline, (x) => x.cpuUs[ownBaseline]),
    `${label}: ${ownBaseline === "broker" ? "the broker's CPU" : "the origin's CPU"}`,
  );
}
