// workerd for the bench: the same binary the product runs, started the way the product starts
// it (`workerd serve <config> --experimental`, PATH as the only environment), under either a
// hand-written minimal config or the product's own generator (host-bridge/cli/workerd-config.ts,
// compiled from source with esbuild so the bench renders exactly what `personalclaw start` renders).
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { mkdirSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";
import { WORKER_BUILD } from "../../scripts/build.mjs";
import { freePort, httpGet, pollUntil, msSince, stopChild } from "./procs.mjs";

const require = createRequire(import.meta.url);
export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const benchWorkers = join(repoRoot, "bench", "workers");

export function workerdBinary() {
  return require.resolve("workerd/bin/workerd");
}

const q = (value) => JSON.stringify(value);

/**
 * A hand-written minimal config: one worker, its modules, text bindings, optionally loopback
 * network as its global outbound, external HTTP services bound by name (a UNIX socket address
 * included) and Durable Object namespaces with localDisk storage.
 */
export function minimalConfig({
  configPath,
  listen,
  modules,
  bindings = {},
  loopbackNetwork = false,
  durable = null,
  externalServices = {},
}) {
  const dir = dirname(configPath);
  const services = [`(name = "main", worker = .main)`];
  if (loopbackNetwork) services.push(`(name = "loopback", network = (allow = ["local"], deny = []))`);
  for (const [binding, address] of Object.entries(externalServices))
    services.push(`(name = ${q(`external-${binding}`)}, external = (address = ${q(address)}, http = ()))`);
  if (durable) services.push(`(name = "state", disk = (path = ${q(durable.stateDir)}, writable = true))`);
  const bindingLines = [
    ...Object.entries(bindings).map(([name, value]) => `(name = ${q(name)}, text = ${q(value)})`),
    ...(durable
      ? durable.namespaces.map((d) => `(name = ${q(d.binding)}, durableObjectNamespace = ${q(d.className)})`)
      : []),
    ...Object.keys(externalServices).map((binding) => `(name = ${q(binding)}, service = ${q(`external-${binding}`)})`),
  ];
  return `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [ ${services.join(", ")} ],
  sockets = [ (name = "http", address = ${q(listen)}, http = (), service = "main") ],
);

const main :Workerd.Worker = (
  modules = [ ${modules.map((m) => `(name = ${q(m.name)}, esModule = embed ${q(relative(dir, m.path))})`).join(", ")} ],
  compatibilityDate = "2026-04-01",
${loopbackNetwork ? `  globalOutbound = "loopback",\n` : ""}${
    durable
      ? `  durableObjectNamespaces = [ ${durable.namespaces.map((d) => `(className = ${q(d.className)}, uniqueKey = ${q(d.uniqueKey)}, enableSql = true)`).join(", ")} ],
  durableObjectStorage = (localDisk = "state"),\n`
      : ""
  }  bindings = [ ${bindingLines.join(", ")} ],
);
`;
}

let generator = null;
/** The product's renderWorkerdConfig, compiled from its TypeScript source into `scratch`. */
export async function productConfigGenerator(scratch) {
  if (generator) return generator;
  const outfile = join(scratch, "workerd-config.mjs");
  await build({
    entryPoints: [join(repoRoot, "host-bridge", "cli", "workerd-config.ts")],
    outfile,
    bundle: true,
    format: "esm",
    platform: "node",
    logLevel: "warning",
  });
  generator = await import(pathToFileURL(outfile).href);
  return generator;
}

/** Bundles the hello worker with the gateway's Durable Object classes, for the product's config. */
export async function buildHelloProductBundle(outfile) {
  await build({
    entryPoints: [join(benchWorkers, "hello-product.js")],
    outfile,
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    external: ["cloudflare:*"],
    logLevel: "warning",
  });
  return outfile;
}

/**
 * Bundles a bench worker written against the product's sources (bench/workers/<entry>) the way
 * the gateway worker is bundled, with the shipped build's TEST_BUILD.
 */
export async function buildBenchWorker(entry, outfile) {
  await build({
    ...WORKER_BUILD,
    entryPoints: [join(benchWorkers, entry)],
    absWorkingDir: repoRoot,
    outfile,
    bundle: true,
    minifySyntax: true,
    target: "es2022",
    define: { TEST_BUILD: "false" },
    logLevel: "warning",
  });
  return outfile;
}

/** The product's config around `workerBundle`, rendered by the product's own generator. */
export async function productConfig({ scratch, configPath, workerBundle, listen }) {
  const { renderWorkerdConfig } = await productConfigGenerator(scratch);
  const stateDir = join(scratch, "hello-product-state");
  const appsDir = join(scratch, "hello-product-apps");
  mkdirSync(stateDir, { recursive: true });
  mkdirSync(appsDir, { recursive: true });
  // The product's config also listens on the backends' gateway socket; each config its own folder.
  const runtimeDir = join(scratch, `hello-product-run-${Math.random().toString(36).slice(2, 8)}`);
  mkdirSync(join(runtimeDir, "gateway"), { recursive: true });
  const toolStampDir = join(runtimeDir, "tool-stamp");
  mkdirSync(toolStampDir, { recursive: true });
  return renderWorkerdConfig({
    configPath,
    workerBundle,
    stateDir,
    toolStampDir,
    webDir: join(repoRoot, "web"),
    appsDir,
    runtimeDir,
    listen,
    bindings: {
      INTERNAL_SECRET: "0".repeat(64),
      BRIDGE_URL: "http://127.0.0.1:9",
      SEL_KEY: "1".repeat(64),
      GATEWAY_PORT: listen.split(":").pop(),
      AUTH_MODE_REQUESTED: "",
      ALLOWED_HOSTS: "",
      VERSION: "bench",
      STARTED_AT: new Date().toISOString(),
    },
  });
}

/**
 * Writes `configText` to `configPath`, starts workerd on it and waits for the first 200 of
 * GET `readyPath`. Answers {child, pid, port, startMs} (spawn to first 200, polled every 5 ms).
 */
export async function startWorkerd({
  configPath,
  configText,
  port,
  readyPath = "/",
  experimental = true,
  logFile = null,
}) {
  writeFileSync(configPath, configText, { mode: 0o600 });
  const started = process.hrtime.bigint();
  const args = ["serve", configPath, ...(experimental ? ["--experimental"] : [])];
  const child = spawn(workerdBinary(), args, {
    stdio: ["ignore", "pipe", "pipe"],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
  });
  let output = "";
  const keep = (chunk) => {
    output = (output + chunk).slice(-4000);
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  let exited = false;
  child.once("exit", () => (exited = true));
  try {
    await pollUntil(
      async () => {
        if (exited) throw new Error(`workerd exited: ${output}`);
        return (await httpGet(port, readyPath, {}, 1_000)).status === 200;
      },
      { intervalMs: 5, timeoutMs: 15_000, what: `workerd on ${configPath}` },
    );
  } catch (error) {
    await stopChild(child, 2_000);
    throw error;
  }
  const startMs = msSince(started);
  if (logFile) child.on("exit", () => writeFileSync(logFile, output));
  return { child, pid: child.pid, port, startMs, stop: () => stopChild(child, 5_000) };
}

/** A free loopback port and its listen address. */
export async function loopbackListen() {
  const port = await freePort();
  return { port, listen: `127.0.0.1:${port}` };
}

/**
 * Starts the bare workerd pass-through worker (fetch to the backend, no auth, no signature),
 * reaching the backend either on a loopback TCP port or, as the gateway reaches a confined
 * backend, through its slot's UNIX socket as an external service binding.
 */
export function startPassthrough(scratch, backend) {
  const id = `passthrough-${backend.socket ? "slot" : "tcp"}`;
  return startOnBackend(scratch, { id, modulePath: join(benchWorkers, "passthrough.js"), backend });
}

/** The forward duties alone in a bare workerd, reaching a confined backend through its slot's socket with the app's secret. */
export async function startForwardDuties(scratch, { socket, secret }) {
  const modulePath = await buildBenchWorker("forward-duties.ts", join(scratch, "forward-duties.js"));
  return startOnBackend(scratch, {
    id: "forward-duties",
    modulePath,
    backend: { socket },
    bindings: { SECRET: secret },
  });
}

/** A bare worker in its own minimal workerd, bound to a backend on a loopback port or through a slot's socket (BACKEND). */
async function startOnBackend(scratch, { id, modulePath, backend, bindings = {} }) {
  const pt = await loopbackListen();
  const configPath = join(scratch, `${id}.capnp`);
  const worker = await startWorkerd({
    configPath,
    port: pt.port,
    readyPath: "/health",
    experimental: false,
    configText: minimalConfig({
      configPath,
      listen: pt.listen,
      modules: [{ name: basename(modulePath), path: modulePath }],
      bindings: { ...bindings, ...(backend.socket ? {} : { BACKEND_PORT: String(backend.port) }) },
      loopbackNetwork: !backend.socket,
      externalServices: backend.socket ? { BACKEND: `unix:${backend.socket}` } : {},
    }),
  });
  return { port: pt.port, pid: worker.pid, stop: () => worker.stop() };
}

let placement = null;
/** The socket of a confined backend's slot, found as the product finds it (runtimeDir, slotSocketName compiled from source). */
export async function backendSlotSocket(scratch, home, slot) {
  if (!placement) {
    const outfile = join(scratch, "slot-placement.mjs");
    await build({
      stdin: {
        contents: `export { runtimeDir } from "./host-bridge/home.ts";\nexport { slotSocketName } from "./kernel/contracts/backend-slots.ts";`,
        resolveDir: repoRoot,
        loader: "ts",
      },
      outfile,
      bundle: true,
      format: "esm",
      platform: "node",
      logLevel: "warning",
    });
    placement = await import(pathToFileURL(outfile).href);
  }
  return join(placement.runtimeDir(home, process.env.XDG_RUNTIME_DIR), placement.slotSocketName(slot));
}
