// `personalclaw start`: the host bridge in this process, workerd as its child, one ready
// line. Ctrl-C (or SIGTERM) stops backends, then workerd, then the bridge, within 10 s.
import { createWriteStream, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa, type ResultPromise } from "execa";
import { authModeInForce } from "../../workers/contracts/auth-mode";
import { safeLines } from "../../workers/contracts/text-safety";
import { clearGatewaySocket, ensureHome, readOrCreateSelKey, runtimeDir, writeFreshLocalSecret, type HomePaths } from "../home";
import { writePrivateFile } from "../private-file";
import { parentEnvironment, type Settings } from "../settings";
import { startBridgeServer } from "../server";
import { createLogRelay } from "../sandbox/log-relay";
import { startAnchorWriter } from "../sel-anchor";
import { BridgeRuntime } from "../bridge-runtime";
import { readOwnerConfig } from "../owner-config";
import { renderWorkerdConfig } from "./workerd-config";
import { isProcessAlive, readGatewayFile, removeGatewayFile, writeGatewayFile } from "./gateway-file";
import { callGateway } from "./gateway-client";
import { isSameProcess, readProcStat } from "../supervisor/process-identity";

export const packageRoot = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);

export interface StartOptions {
  settings: Settings;
  jsonReady: boolean;
}

/** The workerd binary that wrangler's pinned workerd package ships. */
export function workerdBinary(): string {
  return require.resolve("workerd/bin/workerd");
}

export function packageVersion(): string {
  return JSON.parse(readFileSync(join(packageRoot, "package.json"), "utf8")).version;
}

async function freePort(host: string): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, host, () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolvePromise(port));
    });
  });
}

// A gateway.json whose pid is dead is stale: the workerd it left behind is ended only when it
// is still the very process that start recorded (pid and start time), so a process that
// merely reused the pid survives, whatever adopted the orphan.
function clearStaleGateway(paths: HomePaths): void {
  const stale = readGatewayFile(paths);
  if (!stale) return;
  if (stale.workerdPid !== null && stale.workerdStartTime !== null && isSameProcess(stale.workerdPid, stale.workerdStartTime)) {
    process.kill(stale.workerdPid, "SIGKILL");
  }
  removeGatewayFile(paths);
}

async function waitForGateway(home: string, workerd: ResultPromise, deadlineMs: number): Promise<void> {
  const until = Date.now() + deadlineMs;
  let exited = false;
  workerd.finally(() => {
    exited = true;
  });
  while (Date.now() < until) {
    if (exited) throw new Error("workerd exited during start; see logs/gateway.log");
    try {
      const answer = await callGateway(home, "start", "GET", "/api/status");
      if (answer.status === 200) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 40));
  }
  throw new Error(`the gateway did not answer within ${deadlineMs / 1000} s; see logs/gateway.log`);
}

/** Runs the gateway until a signal; returns the exit status. */
export async function startGateway(options: StartOptions): Promise<number> {
  const { settings } = options;
  const paths = ensureHome(settings.home);
  const running = readGatewayFile(paths);
  if (running && isProcessAlive(running.pid)) {
    process.stderr.write(`personalclaw: a gateway is already running for ${paths.home} (pid ${running.pid}, port ${running.port}).\n`);
    return 1;
  }
  clearStaleGateway(paths);
  const selKey = readOrCreateSelKey(paths);
  if (!selKey.ok) {
    process.stderr.write(`personalclaw: refusing to start: ${selKey.reason}\n`);
    return 1;
  }
  const secret = writeFreshLocalSecret(paths);
  const logStream = createWriteStream(paths.gatewayLog, { flags: "a", mode: 0o600 });
  // Every gateway.log line passes the text-safety rule here, whoever wrote it: a message can
  // quote a child's output or an answer, and the file must never hold the gateway's own keys.
  const log = (line: string) => logStream.write(`${new Date().toISOString()} ${safeLines(line, [secret, selKey.keyHex])}\n`);
  const mode = authModeInForce({ AUTH_MODE_REQUESTED: settings.authModeRequested });
  if (mode.warning) {
    process.stderr.write(`personalclaw: warning: ${mode.warning}\n`);
    log(`warning: ${mode.warning}`);
  }
  const bindHost = mode.mode === "none" ? "127.0.0.1" : settings.bindHost;
  if (settings.testHooks) log("warning: PERSONALCLAW_TEST_HOOKS=1: X-Test-Now moves the clock and /api/test/* is open (test runs only)");

  const config = readOwnerConfig(paths.home);
  if (!config.ok) {
    process.stderr.write(`personalclaw: refusing to start: ${config.reason}\n`);
    return 1;
  }
  if (config.config.sandbox.mode === "off") log("warning: sandbox.mode is off: app backends run without bubblewrap");
  const port = settings.port === 0 ? await freePort(bindHost) : settings.port;
  let runtimeFolder: string;
  try {
    runtimeFolder = runtimeDir(paths.home, parentEnvironment().XDG_RUNTIME_DIR);
    clearGatewaySocket(runtimeFolder);
  } catch (error) {
    process.stderr.write(`personalclaw: refusing to start: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
  const runtime = new BridgeRuntime({
    paths,
    runtimeDir: runtimeFolder,
    gatewayPort: port,
    packageRoot,
    version: packageVersion(),
    config: config.config,
    parentEnv: parentEnvironment(),
    skipBackends: settings.skipAppBackends,
    hookTimeoutSeconds: settings.hookTimeoutSeconds,
    log,
    callGateway: (method, path, body) => callGateway(paths.home, "bridge", method, path, body),
  });
  await runtime.prepare();
  const bridge = await startBridgeServer(secret, runtime.operations(), log, (code, subject, group) => runtime.auditRefusal(code, subject, group));

  const startedAt = new Date().toISOString();
  // The config holds the internal credential and the security log key.
  writePrivateFile(
    paths.workerdConfig,
    renderWorkerdConfig({
      configPath: paths.workerdConfig,
      workerBundle: join(packageRoot, "dist", "worker.js"),
      stateDir: paths.state,
      webDir: join(packageRoot, "web"),
      appsDir: paths.apps,
      runtimeDir: runtimeFolder,
      listen: `${bindHost.includes(":") ? `[${bindHost}]` : bindHost}:${port}`,
      bindings: {
        INTERNAL_SECRET: secret,
        BRIDGE_URL: `http://127.0.0.1:${bridge.port}`,
        SEL_KEY: selKey.keyHex,
        GATEWAY_PORT: String(port),
        AUTH_MODE_REQUESTED: settings.authModeRequested,
        ALLOWED_HOSTS: settings.allowedHosts,
        VERSION: packageVersion(),
        STARTED_AT: startedAt,
        TEST_HOOKS: settings.testHooks ? "1" : "0",
      },
    }),
  );
  const workerd = execa(workerdBinary(), ["serve", paths.workerdConfig, "--experimental"], {
    reject: false,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    env: { PATH: parentEnvironment().PATH ?? "/usr/bin:/bin" },
    extendEnv: false,
    cleanup: true,
  });
  // workerd's console can quote request data (an internal error's stack): relayed like a child's output.
  const workerdLog = createLogRelay({ tag: "workerd", sink: (level, line) => log(`${level} ${line}`), secrets: [secret, selKey.keyHex], burst: 1000, perSecond: 20 });
  if (workerd.stdout) workerdLog.attach(workerd.stdout, "info");
  if (workerd.stderr) workerdLog.attach(workerd.stderr, "warning");

  let stopping = false;
  const anchor = startAnchorWriter(paths.selAnchor, async () => (await callGateway(paths.home, "sel-anchor", "GET", "/api/internal/sel/head")).body, log);
  const stopAll = async (exitCode: number) => {
    if (stopping) return;
    stopping = true;
    const hardStop = setTimeout(() => process.exit(exitCode), 9_500);
    try {
      await runtime.stopAll().catch((error) => log(`stopping backends: ${error instanceof Error ? error.message : String(error)}`));
      await appendSecurityRow(paths.home, "gateway_stopped", { port }).catch(() => undefined);
      await anchor.flush().catch(() => undefined);
    } finally {
      anchor.stop();
      workerd.kill("SIGTERM");
      const killTimer = setTimeout(() => workerd.kill("SIGKILL"), 3_000);
      await workerd;
      clearTimeout(killTimer);
      bridge.server.close();
      bridge.server.closeAllConnections();
      removeGatewayFile(paths);
      logStream.end();
      clearTimeout(hardStop);
      process.exit(exitCode);
    }
  };
  process.on("SIGINT", () => void stopAll(0));
  process.on("SIGTERM", () => void stopAll(0));

  try {
    const workerdPid = workerd.pid ?? null;
    writeGatewayFile(paths, {
      pid: process.pid,
      port,
      url: `http://127.0.0.1:${port}/`,
      bridgePort: bridge.port,
      startedAt,
      workerdPid,
      workerdStartTime: workerdPid === null ? null : (readProcStat(workerdPid)?.startTime ?? null),
    });
    await waitForGateway(paths.home, workerd, 15_000);
    await appendSecurityRow(paths.home, "gateway_started", { port, auth_mode: mode.mode });
    await runtime.syncNativeApps();
    await runtime.startEnabledBackends();
    const link = await callGateway(paths.home, "start", "POST", "/api/auth/startup-link", {});
    if (link.status !== 200) throw new Error(`the startup sign-in link could not be minted (${link.status})`);
    const url: string = link.body.url;
    if (options.jsonReady) {
      process.stdout.write(`${JSON.stringify({ url, port, home: paths.home, pid: process.pid })}\n`);
    } else {
      process.stdout.write(`PersonalClaw is running at http://127.0.0.1:${port}/ — sign in: ${url}\n`);
    }
  } catch (error) {
    process.stderr.write(`personalclaw: start failed: ${error instanceof Error ? error.message : String(error)}\n`);
    await stopAll(1);
    return 1;
  }
  await new Promise(() => undefined);
  return 0;
}

/** Appends a security-log row as the CLI (the gateway's start and stop). */
export async function appendSecurityRow(home: string, kind: string, detail: Record<string, unknown>): Promise<void> {
  await callGateway(home, "lifecycle", "POST", "/api/internal/sel/append", { kind, principal: "cli", outcome: "info", subject: "", detail });
}
