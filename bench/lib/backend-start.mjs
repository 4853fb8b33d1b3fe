// Backend start time: spawn to first 2xx of GET /health for node-notes' backend, started by
// the product's own BackendSupervisor (confined and bounded, or with sandbox.mode off), and by
// a bare `bwrap --ro-bind / /` launch: the shape of the sandbox before confinement, as the
// baseline a regression is judged against.
import { spawn } from "node:child_process";
import { cpSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { importProductModules } from "./product-modules.mjs";
import { descendants, freePort, httpGet, msSince, processCpuNs, stopChild } from "./procs.mjs";
import { repoRoot } from "./workerd.mjs";

/** Bundles the supervisor (TypeScript) for this run and imports it. */
async function loadSupervisor() {
  const { module } = await importProductModules("bench-backend-supervisor.mjs", [
    'export * from "./host-bridge/supervisor/backend-supervisor.ts";',
  ]);
  return module;
}

async function healthyWithin(port, timeoutMs) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if ((await httpGet(port, "/health", {}, 500)).status === 200) return true;
    await new Promise((r) => setTimeout(r, 5));
  }
  return false;
}

/** From now: this process's own CPU and that of the processes started under it since, in ms. */
function startCpuMeter() {
  const before = new Set(descendants(process.pid));
  const own = process.cpuUsage();
  return {
    ms() {
      const used = process.cpuUsage(own);
      const children = descendants(process.pid)
        .filter((pid) => !before.has(pid))
        .reduce((sum, pid) => sum + (processCpuNs(pid) ?? 0), 0);
      return (used.user + used.system) / 1000 + children / 1e6;
    },
  };
}

/** One start of the previous sandbox shape (`bwrap --ro-bind / /`), spawn to healthy; answers ms and CPU ms. */
async function previousShapeStart(appDir, spec, env) {
  const port = await freePort();
  const started = process.hrtime.bigint();
  const cpu = startCpuMeter();
  const child = spawn(
    "bwrap",
    [
      "--ro-bind",
      "/",
      "/",
      "--dev",
      "/dev",
      "--proc",
      "/proc",
      "--tmpfs",
      "/tmp",
      "--ro-bind",
      appDir,
      appDir,
      "--bind",
      spec.dataDir,
      spec.dataDir,
      "--unshare-all",
      "--share-net",
      "--die-with-parent",
      "--new-session",
      "--chdir",
      appDir,
      "--",
      process.execPath,
      "server.mjs",
    ],
    {
      env: {
        ...env,
        PORT: String(port),
        PERSONALCLAW_APP_SECRET: "b".repeat(64),
        PERSONALCLAW_APP_NAME: "node-notes",
        PERSONALCLAW_APP_DATA_DIR: spec.dataDir,
      },
      stdio: "ignore",
      detached: true,
    },
  );
  if (!(await healthyWithin(port, 10_000))) throw new Error("the previous-shape backend never answered /health");
  const result = { ms: msSince(started), cpuMs: cpu.ms() };
  await stopChild(child);
  return result;
}

/** Runs `runs` starts of each launch; answers ms arrays keyed by launch. */
export async function measureBackendStarts(scratch, runs) {
  const { BackendSupervisor } = await loadSupervisor();
  const home = join(scratch, "backend-home");
  const appDir = join(home, "apps", "node-notes");
  mkdirSync(join(home, "apps"), { recursive: true });
  cpSync(join(repoRoot, "apps", "fixtures", "node-notes"), appDir, { recursive: true });
  mkdirSync(join(appDir, "data"), { recursive: true });
  const spec = {
    name: "node-notes",
    appDir,
    dataDir: join(appDir, "data"),
    hasStorage: true,
    backend: { command: "node", args: ["server.mjs"], healthCheck: "/health" },
  };
  const out = { confined: [], confinedUnbounded: [], unsandboxed: [], previousShape: [] };
  // CPU of each start, spawn -> healthy: this process's (the supervisor) and that of every
  // process the start made, read while they live (a confined backend's processes are in their
  // own pid namespace and die with it unreaped, so their CPU never reaches a parent's).
  const cpuMs = { confined: [], confinedUnbounded: [], unsandboxed: [], previousShape: [] };
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
  // One supervisor per launch for the whole run, as one bridge keeps one: its bwrap probe and
  // bounds check are made once, at its first start (the warm-up, not counted).
  const unbounded = { mechanism: "none", processLimitBinds: false, description: "bench: confinement without bounds" };
  const supervisors = {
    confined: new BackendSupervisor({
      home,
      sandbox: { mode: "on" },
      parentEnv: env,
      passthrough: [],
      startupPollMs: 5,
    }),
    confinedUnbounded: new BackendSupervisor({
      home,
      sandbox: { mode: "on" },
      bounds: unbounded,
      parentEnv: env,
      passthrough: [],
      startupPollMs: 5,
    }),
    unsandboxed: new BackendSupervisor({
      home,
      sandbox: { mode: "off" },
      parentEnv: env,
      passthrough: [],
      startupPollMs: 5,
    }),
  };
  const launches = [
    ...Object.entries(supervisors).map(([key, sup]) => [
      key,
      async () => {
        const started = process.hrtime.bigint();
        const cpu = startCpuMeter();
        const result = await sup.start(spec);
        if (!result.ok) throw new Error(`${key} start failed: ${result.reason}`);
        // The supervisor's own probe: a confined backend has no host port, only its slot's socket.
        if (!(await sup.waitForHealth(spec.name, 10_000))) throw new Error(`${key} backend never answered /health`);
        const measured = { ms: msSince(started), cpuMs: cpu.ms() };
        await sup.stop(spec.name);
        return measured;
      },
    ]),
    ["previousShape", () => previousShapeStart(appDir, spec, env)],
  ];
  // Run -1 warms every launch up and is not counted; the order flips every other run.
  for (let r = -1; r < runs; r++) {
    for (const [key, launch] of r % 2 === 0 ? launches : [...launches].reverse()) {
      const measured = await launch();
      if (r >= 0) out[key].push(measured.ms);
      if (r >= 0) cpuMs[key].push(measured.cpuMs);
    }
  }
  return { ...out, cpuMs };
}
