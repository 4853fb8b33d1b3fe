// `npm run bench`: what each layer of PersonalClaw costs against the nearest honest baseline,
// measured in the same run on the same machine. Prints a table (or with --json one JSON
// document) of medians over --runs runs with their min-max spread. Results are printed, never
// asserted. Every process it starts is its own child on loopback, stopped before it exits.
//
//   node bench/run.mjs [--json] [--json-out FILE] [--runs 3] [--duration 4] [--only proxy,auth,runtime,install,tail,sel,start,backends,update,events]
import { spawn, execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { summarize, ratio } from "./lib/stats.mjs";
import { descendants, httpGet, msSince, rssKiB, schedNs, stopChild } from "./lib/procs.mjs";
import {
  benchWorkers,
  buildHelloProductBundle,
  buildBenchWorker,
  loopbackListen,
  minimalConfig,
  productConfig,
  repoRoot,
  startPassthrough,
  startForwardDuties,
  backendSlotSocket,
  startWorkerd,
  workerdBinary,
} from "./lib/workerd.mjs";
import {
  copyNodeNotesAs,
  installApp,
  runCli,
  startPersonalclaw,
  testBuildCliPath,
  waitHealthy,
} from "./lib/gateway.mjs";
import { nginxBinary, nginxVersion, startNginx } from "./lib/nginx.mjs";
import { generateBundle } from "./lib/bundle.mjs";
import { runLoad } from "./lib/load.mjs";
import { measureBackendStarts } from "./lib/backend-start.mjs";
import { measureUpdates } from "./lib/update-app.mjs";
import { measureEcho, measureFanout } from "./lib/fanout-load.mjs";

const SECTIONS = ["proxy", "auth", "tail", "runtime", "install", "sel", "start", "backends", "update", "events"];
const { values: argv } = parseArgs({
  options: {
    json: { type: "boolean", default: false },
    runs: { type: "string", default: "3" },
    duration: { type: "string", default: "4" },
    only: { type: "string", default: SECTIONS.join(",") },
    "json-out": { type: "string" },
  },
});
const RUNS = Math.max(3, Math.min(10, Number(argv.runs) || 3));
const DURATION_S = Math.max(1, Math.min(30, Number(argv.duration) || 4));
const LATENCY_DURATION_S = Math.max(1, Math.round(DURATION_S / 2));
const CONNECTIONS = 10;
/** The tail section's load: an authenticated owner read beside a bare workerd hello, p99 and max. */
const TAIL_CONNECTIONS = 50;
const only = new Set(
  argv.only
    .split(",")
    .map((s) => s.trim())
    .filter((s) => SECTIONS.includes(s)),
);
const wants = (s) => only.has(s);

const log = (line) => process.stderr.write(`bench: ${line}\n`);
const scratch = mkdtempSync(join(tmpdir(), "personalclaw-bench-"));
const cleanups = [];
const benchStarted = process.hrtime.bigint();
const benchStartedAt = new Date().toISOString();
const figures = [];
const raw = {};

function figure(section, name, unit, subject, baseline, baselineName, extra = {}) {
  const s = summarize(subject);
  const b = baseline ? summarize(baseline) : null;
  figures.push({
    section,
    name,
    unit,
    subject: s,
    baselineName,
    baseline: b,
    ratio: b ? ratio(s.median, b.median) : null,
    ...extra,
  });
}

// ---------------------------------------------------------------------------------------------
// Load runs: autocannon in a child process (a second process on loopback), bounded by duration.

async function loadSections() {
  const gatewayHome = join(scratch, "gateway-home");
  mkdirSync(gatewayHome);
  log("starting the gateway and installing node-notes");
  const gateway = await startPersonalclaw(gatewayHome);
  cleanups.push(() => gateway.stop());
  await installApp(gateway, join(repoRoot, "apps", "fixtures", "node-notes"));
  const confinedRow = (await waitHealthy(gateway, ["node-notes"]))["node-notes"];
  // The same app on a gateway with sandbox.mode off: its backend listens on a loopback TCP
  // port, the transport every proxied request took before backends had network namespaces of
  // their own, and the port the direct, pass-through and nginx baselines reach it on.
  const tcpHome = join(scratch, "gateway-home-tcp");
  mkdirSync(tcpHome);
  writeFileSync(join(tcpHome, "config.json"), JSON.stringify({ sandbox: { mode: "off" } }));
  const tcpGateway = wants("proxy") ? await startPersonalclaw(tcpHome) : null;
  if (tcpGateway) cleanups.push(() => tcpGateway.stop());
  if (tcpGateway) await installApp(tcpGateway, join(repoRoot, "apps", "fixtures", "node-notes"));
  const rows = tcpGateway ? await waitHealthy(tcpGateway, ["node-notes"]) : null;
  const backendPort = rows?.["node-notes"].backend.port;
  const secretFile = join(tcpHome, "apps", "node-notes", ".app_secret");
  const sign = { secretFile, method: "GET", target: "/api/echo" };
  const targets = [];
  const proxyTarget = {
    id: "gateway-proxy",
    pid: gateway.workerdPid,
    port: gateway.port,
    path: "/apps/node-notes/api/echo",
    headers: gateway.owner,
  };
  if (wants("proxy")) {
    targets.push(proxyTarget, {
      id: "gateway-proxy-tcp",
      port: tcpGateway.port,
      path: "/apps/node-notes/api/echo",
      headers: tcpGateway.owner,
    });
    targets.push({ id: "backend-direct", port: backendPort, path: "/api/echo", sign });
    // The fair pass-through reaches the confined backend the way the gateway does: its slot's socket.
    const slotPassthrough = await startPassthrough(scratch, {
      socket: await backendSlotSocket(scratch, gatewayHome, confinedRow.backend.slot),
    });
    cleanups.push(() => slotPassthrough.stop());
    targets.push({
      id: "workerd-passthrough-slot",
      pid: slotPassthrough.pid,
      port: slotPassthrough.port,
      path: "/api/echo",
      sign: { ...sign, secretFile: join(gatewayHome, "apps", "node-notes", ".app_secret") },
    });
    // The floor of what the gateway owes each forward (signature, header rules, bounded wait,
    // inert answer), the product's own code in a bare worker on the same slot.
    const duties = await startForwardDuties(scratch, {
      socket: await backendSlotSocket(scratch, gatewayHome, confinedRow.backend.slot),
      secret: readFileSync(join(gatewayHome, "apps", "node-notes", ".app_secret"), "utf8").trim(),
    });
    cleanups.push(() => duties.stop());
    targets.push({ id: "forward-duties-slot", pid: duties.pid, port: duties.port, path: "/apps/node-notes/api/echo" });
    const passthrough = await startPassthrough(scratch, { port: backendPort });
    cleanups.push(() => passthrough.stop());
    targets.push({ id: "workerd-passthrough", port: passthrough.port, path: "/api/echo", sign });
    const nginx = nginxBinary();
    if (nginx) {
      const ng = await loopbackListen();
      const proxy = await startNginx({ binary: nginx, scratch, port: ng.port, backendPort });
      cleanups.push(() => proxy.stop());
      targets.push({ id: "nginx-proxy", port: ng.port, path: "/api/echo", sign });
    } else {
      raw.nginxSkipped = "nginx is not installed: the nginx baseline row is skipped";
      log(raw.nginxSkipped);
    }
  }
  if (wants("auth") || wants("tail"))
    targets.push({
      id: "gateway-status",
      pid: gateway.workerdPid,
      port: gateway.port,
      path: "/api/status",
      headers: gateway.owner,
    });
  if (wants("tail"))
    targets.push({
      id: "gateway-sessions",
      pid: gateway.workerdPid,
      port: gateway.port,
      path: "/api/auth/sessions",
      headers: gateway.owner,
    });
  if (wants("auth") || wants("runtime") || wants("tail")) {
    const hp = await loopbackListen();
    const hpConfig = join(scratch, "hello-product.capnp");
    const bundle = await buildHelloProductBundle(join(scratch, "hello-product-bundle.js"));
    const helloProduct = await startWorkerd({
      configPath: hpConfig,
      port: hp.port,
      configText: await productConfig({ scratch, configPath: hpConfig, workerBundle: bundle, listen: hp.listen }),
    });
    cleanups.push(() => helloProduct.stop());
    targets.push({ id: "hello-product-config", pid: helloProduct.pid, port: hp.port, path: "/" });
  }
  if (wants("runtime")) {
    const hm = await loopbackListen();
    const hmConfig = join(scratch, "hello-minimal.capnp");
    const helloMinimal = await startWorkerd({
      configPath: hmConfig,
      port: hm.port,
      experimental: false,
      configText: minimalConfig({
        configPath: hmConfig,
        listen: hm.listen,
        modules: [{ name: "hello.js", path: join(benchWorkers, "hello.js") }],
      }),
    });
    cleanups.push(() => helloMinimal.stop());
    targets.push({ id: "hello-minimal-config", port: hm.port, path: "/" });
  }

  // Each run visits every target once, in an order rotated per run, so drift on a shared
  // machine lands on subject and baseline alike.
  const runs = Object.fromEntries(
    targets.map((t) => [t.id, { loaded: [], single: [], tail: [], tailWait: [], cpuUs: [] }]),
  );
  const tailIds = new Set(["gateway-status", "gateway-sessions", "hello-product-config"]);
  const standard = wants("proxy") || wants("auth") || wants("runtime");
  for (let r = 0; r < RUNS; r++) {
    const order = targets.map((_, i) => targets[(i + r) % targets.length]);
    for (const target of order) {
      log(`run ${r + 1}/${RUNS}: ${target.id}`);
      if (standard && target.id !== "gateway-sessions") {
        // workerd's own CPU per request (its threads' on-CPU time), read across the loaded run.
        const cpuBefore = target.pid ? schedNs(target.pid).onCpu : 0;
        const loaded = await runLoad(target, { connections: CONNECTIONS, duration: DURATION_S, warmup: 1 });
        runs[target.id].loaded.push(loaded);
        if (target.pid) runs[target.id].cpuUs.push((schedNs(target.pid).onCpu - cpuBefore) / 1000 / loaded.requests);
        runs[target.id].single.push(
          await runLoad(target, { connections: 1, duration: LATENCY_DURATION_S, warmup: 0.5 }),
        );
      }
      if (wants("tail") && tailIds.has(target.id)) {
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
  raw.load = runs;
  const pick = (id, kind, field) => (runs[id] ? runs[id][kind].map((x) => x[field]) : null);
  const loadFigures = (section, subjectId, baselineId, label) => {
    if (!runs[subjectId] || !runs[baselineId]) return;
    figure(
      section,
      `req/s, ${CONNECTIONS} connections`,
      "req/s",
      pick(subjectId, "loaded", "rps"),
      pick(baselineId, "loaded", "rps"),
      label,
    );
    for (const [kind, tag] of [
      ["single", "1 connection"],
      ["loaded", `${CONNECTIONS} connections`],
    ]) {
      for (const q of ["p50", "p99"]) {
        const s = pick(subjectId, kind, q);
        const b = pick(baselineId, kind, q);
        const added =
          summarize(s).median !== null && summarize(b).median !== null
            ? summarize(s).median - summarize(b).median
            : null;
        figure(section, `${q} ms, ${tag}`, "ms", s, b, label, q === "p50" ? { addedMs: added } : {});
      }
    }
  };
  if (wants("proxy")) {
    loadFigures(
      "proxy",
      "gateway-proxy",
      "gateway-proxy-tcp",
      "the same proxy to a backend on loopback TCP (before egress)",
    );
    loadFigures("proxy", "gateway-proxy", "backend-direct", "backend direct");
    loadFigures(
      "proxy",
      "gateway-proxy",
      "workerd-passthrough-slot",
      "bare workerd pass-through, the same socket slot",
    );
    loadFigures("proxy", "gateway-proxy", "workerd-passthrough", "bare workerd pass-through, loopback TCP");
    loadFigures(
      "proxy",
      "gateway-proxy",
      "forward-duties-slot",
      "the forward duties alone (signature, header rules, bounded wait, inert answer), same slot",
    );
    loadFigures(
      "proxy",
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
    if (runs["nginx-proxy"]) loadFigures("proxy", "gateway-proxy", "nginx-proxy", "nginx reverse proxy");
  }
  if (wants("auth")) loadFigures("auth", "gateway-status", "hello-product-config", "hello, same runtime path");
  if (wants("tail")) {
    for (const subject of ["gateway-status", "gateway-sessions"]) {
      for (const q of ["p99", "max"]) {
        figure(
          "tail",
          `${q} ms, ${TAIL_CONNECTIONS} connections, ${subject === "gateway-status" ? "GET /api/status" : "GET /api/auth/sessions"} (owner)`,
          "ms",
          pick(subject, "tail", q),
          pick("hello-product-config", "tail", q),
          "bare workerd hello, same run",
        );
      }
      figure(
        "tail",
        `workerd threads runnable without a CPU, % of the run, ${subject === "gateway-status" ? "GET /api/status" : "GET /api/auth/sessions"}`,
        "%",
        runs[subject].tailWait,
        runs["hello-product-config"].tailWait,
        "bare workerd hello, same run",
      );
    }
  }
  if (wants("runtime"))
    loadFigures("runtime", "hello-product-config", "hello-minimal-config", "hello, hand-written minimal config");
  const bad = Object.entries(runs).flatMap(([id, r]) =>
    [...r.loaded, ...r.single]
      .filter((x) => x.non2xx > 0 || x.errors > 0)
      .map((x) => `${id}: ${x.non2xx} non-2xx, ${x.errors} errors`),
  );
  if (bad.length > 0) raw.loadWarnings = bad;
}

// ---------------------------------------------------------------------------------------------
// Runtime path start-up: the hello worker under each config, spawn to first 200, and its RSS.

async function runtimeStartups() {
  const bundle = await buildHelloProductBundle(join(scratch, "hello-product-bundle.js"));
  const out = { product: { startMs: [], rssKiB: [] }, minimal: { startMs: [], rssKiB: [] }, node: { rssKiB: [] } };
  for (let r = 0; r < RUNS; r++) {
    const hm = await loopbackListen();
    const hmConfig = join(scratch, `hello-minimal-start-${r}.capnp`);
    const minimal = await startWorkerd({
      configPath: hmConfig,
      port: hm.port,
      experimental: false,
      configText: minimalConfig({
        configPath: hmConfig,
        listen: hm.listen,
        modules: [{ name: "hello.js", path: join(benchWorkers, "hello.js") }],
      }),
    });
    await new Promise((r2) => setTimeout(r2, 500));
    out.minimal.startMs.push(minimal.startMs);
    out.minimal.rssKiB.push(rssKiB(minimal.pid));
    await minimal.stop();

    const hp = await loopbackListen();
    const hpConfig = join(scratch, `hello-product-start-${r}.capnp`);
    const product = await startWorkerd({
      configPath: hpConfig,
      port: hp.port,
      configText: await productConfig({ scratch, configPath: hpConfig, workerBundle: bundle, listen: hp.listen }),
    });
    await new Promise((r2) => setTimeout(r2, 500));
    out.product.startMs.push(product.startMs);
    out.product.rssKiB.push(rssKiB(product.pid));
    await product.stop();

    // A bare Node HTTP server: the floor under the bridge's own memory.
    const node = spawn(
      process.execPath,
      [
        "-e",
        "require('node:http').createServer((q, s) => s.end('ok')).listen(0, '127.0.0.1', () => console.log('up'))",
      ],
      { stdio: ["ignore", "pipe", "ignore"] },
    );
    await new Promise((resolvePromise) => node.stdout.once("data", resolvePromise));
    await new Promise((r2) => setTimeout(r2, 500));
    out.node.rssKiB.push(rssKiB(node.pid));
    await stopChild(node, 2_000);
  }
  raw.runtimeStartups = out;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Install: `apps preview` of a 10 000-file / 100 MiB bundle against walk + read + sha256.

async function walkReadHash(dir) {
  const stack = [dir];
  const hash = createHash("sha256");
  let files = 0;
  let bytes = 0;
  while (stack.length > 0) {
    const current = stack.pop();
    for (const entry of readdirSync(current, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const abs = join(current, entry.name);
      if (entry.isDirectory()) stack.push(abs);
      else if (entry.isFile()) {
        const data = await readFile(abs);
        hash.update(createHash("sha256").update(data).digest());
        files++;
        bytes += data.length;
      }
    }
  }
  return { files, bytes, digest: hash.digest("hex") };
}

async function installSection() {
  const bundle = join(scratch, "bundle-10k");
  log("generating the 10 000-file / 100 MiB bundle");
  const generated = generateBundle(bundle, {
    template: join(repoRoot, "apps", "fixtures", "node-notes"),
    name: "bench-bundle",
    files: 10_000,
    bytes: 100 * 1024 * 1024,
  });
  const home = join(scratch, "preview-home");
  mkdirSync(home);
  const preview = [];
  const baseline = [];
  const fixture = [];
  const nodeStart = [];
  await walkReadHash(bundle); // the page cache holds the tree for both sides from here on
  for (let r = 0; r < RUNS; r++) {
    log(`run ${r + 1}/${RUNS}: install preview`);
    const started = process.hrtime.bigint();
    const walked = await walkReadHash(bundle);
    baseline.push(msSince(started));
    const answer = await runCli(["apps", "preview", bundle, "--json", "--home", home], 180_000);
    if (answer.code !== 0)
      throw new Error(
        `apps preview failed (${answer.code}): ${answer.stdout.slice(0, 400)} ${answer.stderr.slice(0, 400)}`,
      );
    preview.push(answer.ms);
    if (walked.files < generated.files) throw new Error("the baseline walk missed files");
    // The same command on the 4-file fixture: the CLI's fixed cost (Node start, build check).
    const small = await runCli([
      "apps",
      "preview",
      join(repoRoot, "apps", "fixtures", "node-notes"),
      "--json",
      "--home",
      home,
    ]);
    fixture.push(small.ms);
    const bare = process.hrtime.bigint();
    execFileSync(process.execPath, ["-e", "0"]);
    nodeStart.push(msSince(bare));
  }
  raw.install = {
    generated,
    previewMs: preview,
    baselineMs: baseline,
    fixturePreviewMs: fixture,
    nodeStartMs: nodeStart,
  };
  figure("install", "apps preview, 10 000 files / 100 MiB", "ms", preview, baseline, "walk + read + sha256 in-process");
  figure(
    "install",
    "apps preview, node-notes (4 files): CLI fixed cost",
    "ms",
    fixture,
    nodeStart,
    "node -e 0 (process start)",
  );
}

// ---------------------------------------------------------------------------------------------
// Security log: sustained appends per second through the bench's benchAppend, chained vs not,
// and workerd's CPU time per row on each side (read from schedstat around every call).
// The chained loop is the product's append: the HMAC chain under the current epoch's key, the
// keyless root's leaf per row, and an Ed25519-signed checkpoint every 1000 rows (5 per call).

async function selSection() {
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
  cleanups.push(() => worker.stop());
  const PER_CALL = 2_000;
  const PAIRS = 10;
  const out = { chained: [], unchained: [], chainedCpuUs: [], unchainedCpuUs: [], callRoundTripMs: [] };
  const call = async (object, n, chained) => {
    const answer = await httpGet(sl.port, `/append?object=${object}&n=${n}&chained=${chained ? 1 : 0}`, {}, 60_000);
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
        const cpuBefore = schedNs(worker.pid).onCpu;
        const started = process.hrtime.bigint();
        const answer = await call(chained ? chainedObject : plainObject, PER_CALL, chained);
        elapsed[side] += msSince(started);
        cpuNs[side] += schedNs(worker.pid).onCpu - cpuBefore;
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
  raw.sel = { ...out, rowsPerCall: PER_CALL, pairsPerRun: PAIRS };
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

// ---------------------------------------------------------------------------------------------
// Live events: 200 sockets, 1 000 events/s for --duration s, delivery latency per frame per
// socket, through the product's /api/ws and EventHub (owner sockets; the frame passes the scope
// filter) against a bare workerd Durable Object doing the same fan-out, and a bare one-socket
// echo round trip, all in this run. The product is started from the test build so the bench can
// publish through POST /api/test/events/publish (the only door that takes any frame at this rate).

const EVENT_SOCKETS = 200;
/** The load, and a tenth of it: on a small machine the first saturates it, the second shows the path's own latency. */
const EVENT_RATES = [1000, 100];

async function eventsSection() {
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
  raw.events = { sockets: EVENT_SOCKETS, rates: EVENT_RATES, durationS: DURATION_S, ...out };
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
  const lost = Object.entries(out)
    .filter(([key]) => key !== "echo")
    .flatMap(([key, runs]) =>
      runs.filter((x) => x.delivered < x.expected).map((x) => `${key}: ${x.delivered}/${x.expected}`),
    );
  if (lost.length > 0) raw.eventsShortfall = lost;
  await gateway.stop();
  await worker.stop();
}

// ---------------------------------------------------------------------------------------------
// Start and memory: `personalclaw start` to the first 200 of /api/status, RSS idle and with
// 10 apps whose backends run.

async function startSection(runtime) {
  const appsDir = join(scratch, "ten-apps");
  const names = Array.from({ length: 10 }, (_, i) => `bench-app-${String(i + 1).padStart(2, "0")}`);
  for (const name of names) copyNodeNotesAs(join(appsDir, name), name);
  const out = { firstStatusMs: [], readyMs: [], idle: [], tenApps: [] };
  const rssOf = (gateway) => {
    const workerd = rssKiB(gateway.workerdPid);
    const bridge = rssKiB(gateway.bridgePid);
    const workerdTree = new Set([gateway.workerdPid, ...descendants(gateway.workerdPid)]);
    const backendPids = descendants(gateway.bridgePid).filter((p) => !workerdTree.has(p));
    const backends = backendPids.reduce((sum, p) => sum + rssKiB(p), 0);
    return { workerd, bridge, gateway: workerd + bridge, backends, backendProcesses: backendPids.length };
  };
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
  raw.start = out;
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

// ---------------------------------------------------------------------------------------------

function machine() {
  const read = (cmd, args) => {
    try {
      return execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
    } catch (error) {
      return String(error.stderr ?? "").trim() || null;
    }
  };
  const nginx = nginxBinary();
  return {
    nproc: Number(read("nproc", [])) || cpus().length,
    cpu: cpus()[0]?.model ?? null,
    memoryGiB: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    workerd: read(workerdBinary(), ["--version"]),
    nginx: nginx ? nginxVersion(nginx) : null,
    kernel: read("uname", ["-sr"]),
  };
}

const fmt = (x, unit) => {
  if (x === null || x === undefined) return "—";
  if (unit === "req/s" || unit === "rows/s" || unit === "frames/s")
    return x >= 100 ? Math.round(x).toLocaleString("en-US") : x.toFixed(1);
  if (unit === "cores") return x.toFixed(2);
  if (unit === "MiB" || unit === "µs/row") return x.toFixed(1);
  if (unit === "µs/request") return Math.round(x).toLocaleString("en-US");
  if (unit === "%") return `${x.toFixed(0)} %`;
  if (unit === "ms") return x >= 100 ? Math.round(x).toLocaleString("en-US") : x >= 10 ? x.toFixed(1) : x.toFixed(2);
  return String(x);
};
const cell = (s, unit) => (s ? `${fmt(s.median, unit)} [${fmt(s.min, unit)}–${fmt(s.max, unit)}]` : "—");

function table(doc) {
  const lines = [];
  lines.push(
    `PersonalClaw bench — ${doc.date} — ${doc.machine.nproc} CPU (${doc.machine.cpu}), ${doc.machine.memoryGiB} GiB, Node ${doc.machine.node}, ${doc.machine.workerd}`,
  );
  lines.push(
    `medians of ${doc.settings.runs} runs [min–max]; load: autocannon in a child process, ${doc.settings.connections} connections for ${doc.settings.durationS} s and 1 connection for ${doc.settings.latencyDurationS} s per run`,
  );
  lines.push("");
  const header = ["section", "figure", "unit", "subject", "baseline", "baseline value", "ratio", "added"];
  const rows = doc.figures.map((f) => [
    f.section,
    f.name,
    f.unit,
    cell(f.subject, f.unit),
    f.baselineName ?? "—",
    cell(f.baseline, f.unit),
    f.ratio === null ? "—" : `${f.ratio.toFixed(2)}×`,
    f.addedMs === undefined || f.addedMs === null ? "" : `+${f.addedMs.toFixed(2)} ms`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const render = (r) => `| ${r.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
  lines.push(render(header));
  lines.push(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
  for (const r of rows) lines.push(render(r));
  if (doc.notes.length > 0) {
    lines.push("");
    for (const n of doc.notes) lines.push(`note: ${n}`);
  }
  lines.push(`total bench time: ${doc.elapsedS.toFixed(0)} s`);
  return lines.join("\n");
}

async function main() {
  const notes = [];
  try {
    if (wants("proxy") || wants("auth") || wants("runtime") || wants("tail")) await loadSections();
    let runtime = null;
    if (wants("runtime") || wants("start")) runtime = await runtimeStartups();
    if (wants("runtime")) {
      figure(
        "runtime",
        "start -> first 200 (hello)",
        "ms",
        runtime.product.startMs,
        runtime.minimal.startMs,
        "hello, hand-written minimal config",
      );
      figure(
        "runtime",
        "RSS idle (hello)",
        "MiB",
        runtime.product.rssKiB.map((x) => x / 1024),
        runtime.minimal.rssKiB.map((x) => x / 1024),
        "hello, hand-written minimal config",
      );
    }
    if (wants("install")) await installSection();
    if (wants("sel")) await selSection();
    if (wants("start")) await startSection(runtime);
    if (wants("backends")) {
      log("backend start: confined, unsandboxed and the previous sandbox shape");
      const starts = await measureBackendStarts(scratch, Math.max(RUNS, 5));
      raw.backendStarts = starts;
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
    }
    if (wants("events")) await eventsSection();
    if (wants("update")) {
      log("update: node-notes with a 10 MB SQLite database in data/, against a bare copy of the same files");
      const updates = await measureUpdates(scratch, RUNS);
      raw.updates = updates;
      figure(
        "update",
        "update node-notes (10 MB SQLite in data/) -> new backend healthy, rollback dropped",
        "ms",
        updates.update,
        updates.bareCopy,
        "cp -r of the same files",
      );
    }
  } finally {
    for (const stop of cleanups.reverse()) await stop().catch(() => undefined);
    rmSync(scratch, { recursive: true, force: true });
  }
  if (raw.nginxSkipped) notes.push(raw.nginxSkipped);
  if (raw.loadWarnings) notes.push(`some load runs saw failures: ${raw.loadWarnings.join("; ")}`);
  const doc = {
    date: benchStartedAt,
    machine: machine(),
    settings: {
      runs: RUNS,
      durationS: DURATION_S,
      latencyDurationS: LATENCY_DURATION_S,
      connections: CONNECTIONS,
      sections: [...only],
    },
    figures,
    notes,
    raw,
    elapsedS: msSince(benchStarted) / 1000,
  };
  if (argv["json-out"]) writeFileSync(argv["json-out"], `${JSON.stringify(doc, null, 2)}\n`);
  if (argv.json) process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
  else process.stdout.write(`${table(doc)}\n`);
}

const onSignal = async () => {
  for (const stop of cleanups.reverse()) await stop().catch(() => undefined);
  rmSync(scratch, { recursive: true, force: true });
  process.exit(130);
};
process.once("SIGINT", onSignal);
process.once("SIGTERM", onSignal);

await main();
