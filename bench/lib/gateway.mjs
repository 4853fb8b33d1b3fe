// The product as an owner runs it: `personalclaw start --json-ready` on a temporary home, the
// CLI for installs, the owner Bearer from the ready line's sign-in URL.
import { spawn, execFile } from "node:child_process";
import { cpSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { join } from "node:path";
import { repoRoot } from "./workerd.mjs";
import { descendants, freePort, httpGet, pollUntil, msSince, processCpuNs, stopChild } from "./procs.mjs";

export const cliPath = join(repoRoot, "bin", "personalclaw.mjs");
/** The test build's command: the product plus /api/test/* (docs/design/test-build.md). */
export const testBuildCliPath = join(repoRoot, "test", "build", "personalclaw.mjs");

function cliEnv() {
  const env = { ...process.env };
  for (const name of Object.keys(env)) if (name.startsWith("PERSONALCLAW_")) delete env[name];
  return env;
}

/** Runs one CLI command to completion (bounded); answers {code, stdout, stderr, ms}. */
export function runCli(args, timeoutMs = 120_000, cli = cliPath) {
  const started = process.hrtime.bigint();
  return new Promise((resolvePromise) => {
    execFile(
      process.execPath,
      [cli, ...args],
      { env: cliEnv(), timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, encoding: "utf8" },
      (error, stdout, stderr) => {
        resolvePromise({ code: error ? (error.code ?? 1) : 0, stdout, stderr, ms: msSince(started) });
      },
    );
  });
}

/**
 * Starts `personalclaw start` and measures spawn -> first 200 of GET /api/status (polled every
 * 10 ms with the internal credential the start writes, as the CLI itself asks) and spawn -> ready line.
 */
export async function startPersonalclaw(home, cli = cliPath, extraEnv = {}, extraArgs = []) {
  const port = await freePort();
  const started = process.hrtime.bigint();
  const args = [cli, "start", "--port", String(port), "--home", home, "--json-ready", ...extraArgs];
  const child = spawn(process.execPath, args, {
    env: { ...cliEnv(), ...extraEnv },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (c) => (stderr = (stderr + c).slice(-4000)));
  const ready = new Promise((resolvePromise, reject) => {
    const rl = createInterface({ input: child.stdout });
    rl.once("line", (line) => resolvePromise({ line, ms: msSince(started) }));
    child.once("exit", (code) => reject(new Error(`personalclaw start exited ${code}: ${stderr}`)));
  });
  ready.catch(() => undefined);
  const secretFile = join(home, ".local_secret");
  let firstStatusMs = null;
  let cpuToFirstStatusNs = null;
  let cpuByName = null;
  await pollUntil(
    async () => {
      if (child.exitCode !== null) throw new Error(`personalclaw start exited: ${stderr}`);
      if (!existsSync(secretFile)) return false;
      const secret = readFileSync(secretFile, "utf8").trim();
      const answer = await httpGet(
        port,
        "/api/status",
        { host: `127.0.0.1:${port}`, "x-internal-secret": secret, "x-personalclaw-work": "cli:bench" },
        1_000,
      );
      if (answer.status !== 200) return false;
      firstStatusMs = msSince(started);
      cpuByName = treeCpuByName(child.pid);
      cpuToFirstStatusNs = Object.values(cpuByName).reduce((sum, x) => sum + x, 0);
      return true;
    },
    { intervalMs: 10, timeoutMs: 30_000, what: "the first 200 of /api/status" },
  );
  const { line, ms: readyMs } = await Promise.race([
    ready,
    new Promise((_, reject) => setTimeout(() => reject(new Error("no ready line in 30 s")), 30_000)),
  ]);
  const info = JSON.parse(line);
  const token = new URL(info.url).searchParams.get("token");
  const gatewayFile = JSON.parse(readFileSync(join(home, "gateway.json"), "utf8"));
  const gateway = {
    home,
    cli,
    port,
    token,
    child,
    bridgePid: info.pid,
    workerdPid: gatewayFile.workerdPid,
    firstStatusMs,
    /** CPU the start command and every process under it (the bridge, workerd, backends) had used at the first 200. */
    cpuToFirstStatusNs,
    /** That CPU by process name. */
    cpuToFirstStatusByName: cpuByName,
    /** When the start command was spawned (process.hrtime.bigint()). */
    startedAt: started,
    readyMs,
    owner: { authorization: `Bearer ${token}` },
    get: (path) => httpGet(port, path, { authorization: `Bearer ${token}` }),
    async stop() {
      await stopChild(child, 15_000);
    },
  };
  return gateway;
}

/** CPU time (ns) of a process and every live process under it, each with its reaped children's. */
export function treeCpuNs(root) {
  return [root, ...descendants(root)].reduce((sum, pid) => sum + (processCpuNs(pid) ?? 0), 0);
}

/** The same CPU time by process name (/proc/<pid>/comm: node, workerd, bwrap...), in ns. */
export function treeCpuByName(root) {
  const out = {};
  for (const pid of [root, ...descendants(root)]) {
    let name;
    try {
      name = readFileSync(`/proc/${pid}/comm`, "utf8").trim();
    } catch {
      continue; // gone since it was listed
    }
    out[name] = (out[name] ?? 0) + (processCpuNs(pid) ?? 0);
  }
  return out;
}

/** Installs `folder` with consent given on the command line; throws with the CLI's answer on failure. */
export async function installApp(gateway, folder) {
  const answer = await runCli(
    ["apps", "install", folder, "--yes", "--json", "--home", gateway.home],
    120_000,
    gateway.cli,
  );
  if (answer.code !== 0)
    throw new Error(`install ${folder} failed (${answer.code}): ${answer.stdout} ${answer.stderr}`);
  return JSON.parse(answer.stdout);
}

/** Waits until every named app's backend is running and healthy; answers the rows. */
export async function waitHealthy(gateway, names, timeoutMs = 60_000) {
  const rows = {};
  await pollUntil(
    async () => {
      for (const name of names) {
        if (rows[name]?.backend?.healthy) continue;
        const answer = await gateway.get(`/api/apps/${name}`);
        if (answer.status === 200) rows[name] = JSON.parse(answer.body);
      }
      return names.every((n) => rows[n]?.backend?.healthy && rows[n]?.backend?.running);
    },
    { intervalMs: 200, timeoutMs, what: `healthy backends for ${names.join(", ")}` },
  );
  return rows;
}

/** Copies node-notes as `name` (manifest name and its own API prefix changed). */
export function copyNodeNotesAs(dest, name) {
  const template = join(repoRoot, "apps", "fixtures", "node-notes");
  cpSync(template, dest, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(template, "app.json"), "utf8"));
  manifest.name = name;
  manifest.displayName = `Bench ${name}`;
  manifest.permissions.api = [`/api/apps/${name}/`];
  writeFileSync(join(dest, "app.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  return dest;
}
