// Where the proxy path's time goes, by comparing variants (an ablation): the gateway worker is
// rebuilt from its own sources with one phase of `/apps/<name>/api/*` taken off the request
// path (its answer cached in the isolate after the first request), each variant runs as a
// full `personalclaw start` from a throw-away package copy, and all of them are loaded the same
// way, interleaved, beside the bare workerd pass-through. Product sources are never edited:
// the changes are string replacements applied by an esbuild plugin while bundling.
//
//   node bench/profile-proxy.mjs [--json] [--runs 3] [--duration 4]
//   node bench/profile-proxy.mjs --steps [--json] [--runs 3]
// Run `npm run build` first (the variants reuse dist/cli.mjs). With --steps it measures instead
// what each step of the path costs by itself inside workerd (bench/workers/proxy-steps.ts).
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import { WORKER_BUILD } from "../scripts/build.mjs";
import { summarize } from "./lib/stats.mjs";
import { runLoad } from "./lib/load.mjs";
import {
  backendSlotSocket,
  buildBenchWorker,
  loopbackListen,
  minimalConfig,
  repoRoot,
  startPassthrough,
  startWorkerd,
} from "./lib/workerd.mjs";
import { httpGet } from "./lib/procs.mjs";
import { schedNs } from "./lib/procs.mjs";
import { installApp, startPersonalclaw, waitHealthy } from "./lib/gateway.mjs";

const { values: argv } = parseArgs({
  options: {
    json: { type: "boolean", default: false },
    runs: { type: "string", default: "3" },
    duration: { type: "string", default: "4" },
    steps: { type: "boolean", default: false },
  },
});
const RUNS = Math.max(3, Math.min(10, Number(argv.runs) || 3));
const DURATION_S = Math.max(1, Math.min(30, Number(argv.duration) || 4));
const log = (line) => process.stderr.write(`profile: ${line}\n`);

// Each phase: the file, the exact texts on the request path, and what replaces them. A request
// that changes nothing makes no Durable Object call any more; what is left is the worker's own
// JavaScript and the runtime calls it makes. The signature cannot be taken off (the backend
// refuses an unsigned request), so its cost is what the ablation leaves unexplained.
const PHASES = {
  guards: {
    file: "workers/routes/pipeline.ts",
    what: "host, origin and framing checks",
    edits: [
      { find: "    checkHost(request.headers, hosts);\n", replace: "" },
      {
        find: "    checkOrigin(request.headers, request.method, hosts, parsed);\n    checkRequestFraming(request.headers);\n",
        replace: "",
      },
    ],
  },
  principal: {
    file: "workers/routes/pipeline.ts",
    what: "principal resolution (internal credential, kept owner session)",
    edits: [
      {
        find: "    principal =\n      (await internalPrincipal(c.req.raw, row, env, parsed.path)) ??\n      (await resolvePrincipal(env, presentedCredentials(parsed), now));",
        replace:
          "    principal = (__benchPrincipal ??=\n      (await internalPrincipal(c.req.raw, row, env, parsed.path)) ??\n      (await resolvePrincipal(env, presentedCredentials(parsed), now)));",
      },
    ],
    prelude: "let __benchPrincipal: any = null;\n",
  },
  headersIn: {
    file: "workers/proxy/signed-send.ts",
    what: "request header filtering",
    edits: [
      {
        find: "const headers = forwardableRequestHeaders(request.headers);",
        replace: "const headers = new Headers();",
      },
    ],
  },
  timer: {
    file: "workers/proxy/signed-send.ts",
    what: "the response timeout (AbortController, setTimeout, clearTimeout)",
    edits: [
      {
        find: "  const timer = setTimeout(() => {\n    timedOut = true;\n    aborter.abort();\n  }, owed.responseTimeoutMs);",
        replace: "  const timer = 0;",
      },
      { find: "      signal: aborter.signal,\n", replace: "" },
    ],
  },
  answer: {
    file: "workers/proxy/forward.ts",
    what: "answer header allowlist and the re-wrapped Response",
    edits: [
      {
        find: '  return inertAnswer(answer, location, request.headers.get("origin"), bodyBack);',
        replace: "  return bodyBack === answer.body ? answer : answer;",
      },
    ],
  },
};

const VARIANTS = [
  { id: "product", phases: [] },
  { id: "guards-off", phases: ["guards"] },
  { id: "principal-kept", phases: ["principal"] },
  { id: "headers-in-off", phases: ["headersIn"] },
  { id: "timer-off", phases: ["timer"] },
  { id: "answer-as-is", phases: ["answer"] },
  { id: "all-off", phases: ["guards", "principal", "headersIn", "timer", "answer"] },
];

function ablationPlugin(phases) {
  const byFile = new Map();
  for (const name of phases) {
    const phase = PHASES[name];
    const abs = join(repoRoot, phase.file);
    if (!byFile.has(abs)) byFile.set(abs, []);
    byFile.get(abs).push(phase);
  }
  return {
    name: "bench-ablation",
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, (args) => {
        const edits = byFile.get(args.path);
        if (!edits) return undefined;
        let contents = readFileSync(args.path, "utf8");
        for (const phase of edits) {
          for (const edit of phase.edits) {
            if (!contents.includes(edit.find))
              throw new Error(`${phase.file}: the text to replace is gone; update bench/profile-proxy.mjs`);
            contents = contents.replace(edit.find, edit.replace);
          }
        }
        // After the imports: the caches live for the isolate's lifetime.
        const lastImport = contents.lastIndexOf("\nimport ");
        const insertAt = lastImport === -1 ? 0 : contents.indexOf("\n", contents.indexOf(";", lastImport)) + 1;
        contents = contents.slice(0, insertAt) + edits.map((e) => e.prelude ?? "").join("") + contents.slice(insertAt);
        return { contents, loader: "ts" };
      });
    },
  };
}

/** A throw-away package root whose dist/worker.js is the variant; everything else is the repo's. */
async function variantPackage(scratch, variant) {
  const root = join(scratch, `pkg-${variant.id}`);
  mkdirSync(join(root, "dist"), { recursive: true });
  mkdirSync(join(root, "bin"));
  // host-bridge: the sandbox launcher and preloads the CLI finds beside dist/.
  for (const name of ["node_modules", "web", "apps", "host-bridge"])
    symlinkSync(join(repoRoot, name), join(root, name));
  copyFileSync(join(repoRoot, "package.json"), join(root, "package.json"));
  for (const name of ["cli.mjs", "reserved-app-names.json"])
    copyFileSync(join(repoRoot, "dist", name), join(root, "dist", name));
  await build({
    ...WORKER_BUILD,
    outfile: join(root, "dist", "worker.js"),
    bundle: true,
    target: "es2022",
    absWorkingDir: repoRoot,
    // The shipped build's flag, as scripts/build.mjs sets it: the worker reads TEST_BUILD.
    define: { TEST_BUILD: "false" },
    logLevel: "warning",
    plugins: [ablationPlugin(variant.phases)],
  });
  const launcher = join(root, "bin", "run.mjs");
  writeFileSync(
    launcher,
    'const { main } = await import("../dist/cli.mjs");\nprocess.exitCode = await main(process.argv.slice(2));\n',
  );
  return launcher;
}

/** Each step's µs per call in a bare workerd, median [min–max] over the runs. */
async function stepCosts() {
  const scratch = mkdtempSync(join(tmpdir(), "personalclaw-steps-"));
  const listen = await loopbackListen();
  const configPath = join(scratch, "proxy-steps.capnp");
  const bundle = await buildBenchWorker("proxy-steps.ts", join(scratch, "proxy-steps.js"));
  const worker = await startWorkerd({
    configPath,
    port: listen.port,
    experimental: false,
    readyPath: "/?n=1000",
    configText: minimalConfig({
      configPath,
      listen: listen.listen,
      modules: [{ name: "proxy-steps.js", path: bundle }],
    }),
  });
  const runs = [];
  try {
    for (let r = 0; r < RUNS; r++) {
      log(`steps run ${r + 1}/${RUNS}`);
      const answer = await httpGet(listen.port, "/?n=20000", {}, 120_000);
      runs.push(JSON.parse(answer.body));
    }
  } finally {
    await worker.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
  const rows = Object.keys(runs[0]).map((step) => ({ step, us: summarize(runs.map((run) => run[step])) }));
  if (argv.json) {
    process.stdout.write(`${JSON.stringify({ date: new Date().toISOString(), runs: RUNS, rows }, null, 2)}\n`);
    return;
  }
  process.stdout.write(
    `proxy path steps inside workerd, µs per call, medians of ${RUNS} runs [min–max]\n\n| step | µs |\n|---|---|\n`,
  );
  for (const row of rows)
    process.stdout.write(
      `| ${row.step} | ${row.us.median.toFixed(2)} [${row.us.min.toFixed(2)}–${row.us.max.toFixed(2)}] |\n`,
    );
}

async function main() {
  const scratch = mkdtempSync(join(tmpdir(), "personalclaw-profile-"));
  const stops = [];
  const results = {};
  try {
    const targets = [];
    let slotSocket = null;
    let secretFile = null;
    for (const variant of VARIANTS) {
      log(`building and starting ${variant.id}`);
      const cli = await variantPackage(scratch, variant);
      const home = join(scratch, `home-${variant.id}`);
      mkdirSync(home);
      const gateway = await startPersonalclaw(home, cli);
      stops.push(() => gateway.stop());
      await installApp(gateway, join(repoRoot, "apps", "fixtures", "node-notes"));
      const rows = await waitHealthy(gateway, ["node-notes"]);
      if (slotSocket === null) {
        slotSocket = await backendSlotSocket(scratch, home, rows["node-notes"].backend.slot);
        secretFile = join(home, "apps", "node-notes", ".app_secret");
      }
      targets.push({
        id: variant.id,
        pid: gateway.workerdPid,
        port: gateway.port,
        path: "/apps/node-notes/api/echo",
        headers: gateway.owner,
      });
    }
    // The floor: a bare workerd reaching the first variant's backend through the same socket slot.
    const passthrough = await startPassthrough(scratch, { socket: slotSocket });
    stops.push(() => passthrough.stop());
    targets.push({
      id: "workerd-passthrough",
      pid: passthrough.pid,
      port: passthrough.port,
      path: "/api/echo",
      sign: { secretFile, method: "GET", target: "/api/echo" },
    });

    for (const t of targets) results[t.id] = { loaded: [], single: [], cpu: [] };
    for (let r = 0; r < RUNS; r++) {
      const order = targets.map((_, i) => targets[(i + r) % targets.length]);
      for (const target of order) {
        log(`run ${r + 1}/${RUNS}: ${target.id}`);
        results[target.id].loaded.push(await runLoad(target, { connections: 10, duration: DURATION_S, warmup: 1 }));
        // workerd's own CPU per request, on the isolate the loaded run just warmed.
        const before = schedNs(target.pid).onCpu;
        const cpuRun = await runLoad(target, { connections: 10, duration: Math.max(1, DURATION_S / 2), warmup: 0 });
        results[target.id].cpu.push({ us: (schedNs(target.pid).onCpu - before) / 1000 / cpuRun.requests });
        results[target.id].single.push(
          await runLoad(target, { connections: 1, duration: Math.max(1, Math.round(DURATION_S / 2)), warmup: 0.5 }),
        );
      }
    }
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    rmSync(scratch, { recursive: true, force: true });
  }
  const med = (id, kind, field) => summarize(results[id][kind].map((x) => x[field]));
  const product = {
    rps: med("product", "loaded", "rps").median,
    p50: med("product", "single", "p50").median,
    cpu: med("product", "cpu", "us").median,
  };
  const rows = Object.keys(results).map((id) => {
    const rps = med(id, "loaded", "rps");
    const p50 = med(id, "single", "p50");
    const variant = VARIANTS.find((v) => v.id === id);
    return {
      id,
      removed: variant
        ? variant.phases.map((p) => PHASES[p].what)
        : ["everything but the fetch (bare pass-through, load generator signs)"],
      rps,
      p50Single: p50,
      p50Loaded: med(id, "loaded", "p50"),
      cpuUs: med(id, "cpu", "us"),
      cpuUsSaved: product.cpu - med(id, "cpu", "us").median,
      rpsVsProduct: rps.median / product.rps,
      p50SavedMs: product.p50 - p50.median,
      non2xx:
        results[id].loaded.reduce((s, x) => s + x.non2xx, 0) + results[id].single.reduce((s, x) => s + x.non2xx, 0),
    };
  });
  if (argv.json) {
    process.stdout.write(
      `${JSON.stringify({ date: new Date().toISOString(), runs: RUNS, durationS: DURATION_S, rows, raw: results }, null, 2)}\n`,
    );
    return;
  }
  const f = (s, d = 2) => `${s.median.toFixed(d)} [${s.min.toFixed(d)}–${s.max.toFixed(d)}]`;
  process.stdout.write(
    `proxy ablation, medians of ${RUNS} runs [min–max]; req/s at 10 connections, p50 at 1 connection, workerd CPU per request at 10 connections\n\n`,
  );
  process.stdout.write(
    "| variant | taken off the request path | req/s | × product | p50 ms (1 conn) | p50 saved ms | p50 ms (10 conn) | workerd CPU µs/request | CPU µs saved | non-2xx |\n|---|---|---|---|---|---|---|---|---|---|\n",
  );
  for (const row of rows) {
    process.stdout.write(
      `| ${row.id} | ${row.removed.join("; ") || "nothing"} | ${f(row.rps, 0)} | ${row.rpsVsProduct.toFixed(2)}× | ${f(row.p50Single, 3)} | ${row.p50SavedMs.toFixed(3)} | ${f(row.p50Loaded, 2)} | ${f(row.cpuUs, 0)} | ${row.cpuUsSaved.toFixed(0)} | ${row.non2xx} |\n`,
    );
  }
}

await (argv.steps ? stepCosts() : main());
