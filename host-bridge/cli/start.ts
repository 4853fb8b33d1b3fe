// `personalclaw start`: the host bridge in this process, workerd as its child, one ready
// line. Ctrl-C (or SIGTERM) stops backends, then workerd, then the bridge, within 10 s.
import { existsSync, readdirSync, realpathSync } from "node:fs";
import type { ResultPromise } from "execa";
import { authModeInForce } from "../../kernel/contracts/auth-mode";
import { safeLines } from "../../kernel/text/text-safety";
import { openGatewayDoor } from "../sandbox/child-identity";
import {
  clearGatewaySocket,
  clearSlotSockets,
  ensureHome,
  readOrCreateSelKey,
  releaseRuntimeDir,
  runtimeDir,
  writeFreshLocalSecret,
  type HomePaths,
} from "../home";
import { writePrivateFile } from "../private-file";
import { sweepHomeStagingFiles } from "../staging-sweep";
import { parentEnvironment, type Settings } from "../settings";
import { startBridgeServer } from "../server";
import { createLogRelay } from "../sandbox/log-relay";
import { readAnchor, readAnchorFile, recordUnacknowledgedAnchor, startAnchorWriter } from "../sel-anchor";
import { sealSeed } from "../sel-seed";
import { startWitnessPoster } from "../sel-witness";
import { verificationCode } from "../../durable/security-log/epoch-key";
import { openGatewayLog } from "../gateway-log";
import {
  describeStateLoss,
  findStateLoss,
  readStateManifest,
  STATE_MANIFEST_INTERVAL_MS,
  restartRecordedAnchor,
  writeStateManifest,
} from "../state-manifest";
import { storageFullReason } from "../../kernel/contracts/storage-full";
import { keepStorageReserve } from "../storage-reserve";
import { BridgeRuntime } from "../bridge-runtime";
import { readOwnerConfig, sessionTtlInForce } from "../owner-config";
import { renderWorkerdConfig } from "./workerd-config";
import { DURABLE_OBJECT_CLASSES, storeFolder } from "../durable-object-stores";
import {
  isRecordedWorkerdAlive,
  readGatewayFile,
  readLiveGateway,
  removeGatewayFile,
  thisProcessIdentity,
  writeGatewayFile,
  type GatewayFile,
} from "./gateway-file";
import { callGateway } from "./gateway-client";
import { identityOf } from "../supervisor/process-identity";
import { findSetpriv, WorkerdSupervisor } from "../supervisor/workerd-supervisor";
import { isPortFree, isPortListenerOwnedBy, portInUseMessage } from "./port-owner";
import { pickFreePort } from "../free-port";
import { commandHint } from "./invocation";
import { packageRoot, packageVersion, webFolder, workerBundle, workerdBinary } from "./package-facts";

export interface StartOptions {
  settings: Settings;
  jsonReady: boolean;
  /** --accept-state-loss: start although a store the state manifest knows is missing, empty or replaced. */
  acceptStateLoss?: boolean;
}

const STORE_NAMESPACES = DURABLE_OBJECT_CLASSES.map((d) => d.uniqueKey);

// A gateway.json whose CLI process is gone (or is now another process) is stale: the workerd it
// left behind is ended only when it is still the very process that start recorded (pid, start
// time and executable), so a process that merely reused a pid survives.
function clearStaleGateway(paths: HomePaths): void {
  const stale = readGatewayFile(paths);
  if (!stale) return;
  if (isRecordedWorkerdAlive(stale)) process.kill(stale.workerdPid!, "SIGKILL");
  removeGatewayFile(paths);
}

/** True when the security log has storage: a missing anchor then means one was lost. */
function securityLogExists(paths: HomePaths): boolean {
  const dir = storeFolder(paths.state, "SecurityLog");
  return existsSync(dir) && readdirSync(dir).some((file) => file.endsWith(".sqlite"));
}

/**
 * Waits until workerd listens on `port` and answers. No credential is sent until the listening
 * socket is provably workerd's own: a program that holds the port never receives one.
 */
async function waitForGateway(home: string, workerd: ResultPromise, port: number, deadlineMs: number): Promise<void> {
  const until = Date.now() + deadlineMs;
  let exited = false;
  workerd.finally(() => {
    exited = true;
  });
  while (Date.now() < until) {
    if (exited) throw new Error(`workerd exited during start; see logs/gateway.log`);
    if (workerd.pid !== undefined && isPortListenerOwnedBy(workerd.pid, port)) {
      try {
        const answer = await callGateway(home, "start", "GET", "/api/status");
        if (answer.status === 200) return;
      } catch {
        // Not answering yet.
      }
    }
    await new Promise((r) => setTimeout(r, 40));
  }
  throw new Error(`the gateway did not answer within ${deadlineMs / 1000} s; see logs/gateway.log`);
}

/** Runs the gateway until a signal; returns the exit status. A full disk is a sentence, not a crash. */
export async function startGateway(options: StartOptions): Promise<number> {
  try {
    return await runGateway(options);
  } catch (error) {
    const full = storageFullReason(error);
    if (full === null) throw error;
    process.stderr.write(
      `personalclaw: cannot start: the disk holding ${options.settings.home} is full (${full}); free some space and run \`${commandHint("start")}\` again.\n`,
    );
    return 1;
  }
}

async function runGateway(options: StartOptions): Promise<number> {
  const { settings } = options;
  const paths = ensureHome(settings.home);
  const running = readLiveGateway(paths);
  if (running) {
    process.stderr.write(
      `personalclaw: a gateway is already running for ${paths.home} (pid ${running.pid}, port ${running.port}).\n`,
    );
    return 1;
  }
  clearStaleGateway(paths);
  const selKey = await readOrCreateSelKey(paths);
  if (!selKey.ok) {
    process.stderr.write(`personalclaw: refusing to start: ${selKey.reason}\n`);
    return 1;
  }
  // Lost state is noticed before anything could write over it.
  const manifest = readStateManifest(paths.home);
  const losses = findStateLoss(manifest, paths.state, STORE_NAMESPACES);
  if (losses.length > 0 && !options.acceptStateLoss) {
    process.stderr.write(
      `personalclaw: refusing to start: state the gateway had is gone:\n${describeStateLoss(paths.state, manifest!, losses)}\n`,
    );
    return 1;
  }
  const anchorAtStart = securityLogExists(paths) ? readAnchorFile(paths.selAnchor) : { state: "ok" as const };
  const config = readOwnerConfig(paths.home);
  if (!config.ok) {
    process.stderr.write(`personalclaw: refusing to start: ${config.reason}\n`);
    return 1;
  }
  const mode = authModeInForce({ AUTH_MODE_REQUESTED: settings.authModeRequested });
  const bindHost =
    mode.mode === "none" ? "127.0.0.1" : settings.bindHostFromEnv ? settings.bindHost : config.config.gateway.bind_host;
  // A port someone else holds stops the start here, before a credential exists to send.
  if (settings.port !== 0 && !(await isPortFree(bindHost, settings.port))) {
    process.stderr.write(`personalclaw: ${portInUseMessage(settings.port)}.\n`);
    return 1;
  }
  const port = settings.port === 0 ? await pickFreePort(bindHost) : settings.port;

  const secret = writeFreshLocalSecret(paths);
  const gatewayLog = openGatewayLog(paths.gatewayLog);
  // Every gateway.log line passes the text-safety rule here, whoever wrote it: a message can
  // quote a child's output or an answer, and the file must never hold the gateway's own keys.
  const log = (line: string) =>
    gatewayLog.write(`${new Date().toISOString()} ${safeLines(line, [secret, selKey.keyHex])}`);
  if (mode.warning) {
    process.stderr.write(`personalclaw: warning: ${mode.warning}\n`);
    log(`warning: ${mode.warning}`);
  }
  if (TEST_BUILD) log("warning: this is the test build: X-Test-Now moves the clock and /api/test/* is open");
  const swept = sweepHomeStagingFiles(paths.home);
  if (swept.length > 0) log(`removed ${swept.length} staging files a killed write left behind: ${swept.join(", ")}`);
  if (config.config.sandbox.mode === "off") log("warning: sandbox.mode is off: app backends run without bubblewrap");
  const sessionTtl = sessionTtlInForce(config.config);
  if (sessionTtl.capped)
    log(
      `warning: auth.session_ttl in config.json is ${config.config.auth.session_ttl} s, above the 90-day limit; browser sign-ins last 90 days`,
    );
  // The anchor only moves forward: one below the seq this home last saw it at was set back.
  const anchorSetBack =
    "anchor" in anchorAtStart && manifest?.anchorSeq !== undefined && anchorAtStart.anchor.seq < manifest.anchorSeq
      ? `set back (seq ${anchorAtStart.anchor.seq}, after it was seen at ${manifest.anchorSeq})`
      : null;
  const anchorLost =
    anchorAtStart.state === "ok"
      ? anchorSetBack
      : anchorAtStart.state === "missing"
        ? "missing"
        : `unreadable (${anchorAtStart.reason})`;
  if (anchorLost !== null) {
    recordUnacknowledgedAnchor(paths.home, anchorLost);
    restartRecordedAnchor(paths.home, "anchor" in anchorAtStart ? anchorAtStart.anchor.seq : 0);
    const warning = `warning: the security-log anchor ${paths.selAnchor} is ${anchorLost}: truncation of the log before now cannot be detected. A new anchor starts from the current head; \`${commandHint("doctor")}\` fails until you run \`${commandHint("security", "acknowledge")}\`.`;
    process.stderr.write(`personalclaw: ${warning}\n`);
    log(warning);
  }
  const setpriv = findSetpriv(parentEnvironment().PATH);
  if (setpriv === null)
    log(
      "warning: setpriv (util-linux) is missing: workerd cannot be tied to this process and may outlive it if it is killed",
    );

  let runtimeFolder: string;
  try {
    runtimeFolder = runtimeDir(paths.home, parentEnvironment().XDG_RUNTIME_DIR);
    clearGatewaySocket(runtimeFolder);
  } catch (error) {
    process.stderr.write(
      `personalclaw: refusing to start: ${error instanceof Error ? error.message : String(error)}\n`,
    );
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
  // Disk space kept back for the gateway's own state, handed to it when the disk fills (storage-reserve.ts).
  const reserve = keepStorageReserve({
    home: paths.home,
    log,
    onReleased: (available) =>
      void runtime.reporting.audit({
        kind: "storage_reserve_released",
        outcome: "info",
        subject: "disk",
        detail: { available_bytes: available },
      }),
  });
  const bridge = await startBridgeServer(secret, runtime.operations(), log, (code, subject, group) =>
    runtime.auditRefusal(code, subject, group),
  );

  const startedAt = new Date().toISOString();
  // The config holds the internal credential, and at a home's first start the security log's
  // seed: rewritten without it once the log has taken it (below).
  const workerdConfigInput = {
    configPath: paths.workerdConfig,
    workerBundle,
    stateDir: paths.state,
    webDir: webFolder,
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
      SESSION_TTL_S: String(sessionTtl.seconds),
      PROXY_TIMEOUT_S: String(config.config.proxy.response_timeout_s),
      SEL_RETENTION_DAYS: String(config.config.logs.security_retention_days),
    },
  };
  writePrivateFile(paths.workerdConfig, renderWorkerdConfig(workerdConfigInput));
  if (selKey.firstSeed !== null && settings.seedPassphrase !== "")
    sealSeed(paths.home, selKey.firstSeed, settings.seedPassphrase);
  const binary = workerdBinary();
  const record: GatewayFile = {
    ...thisProcessIdentity(),
    port,
    url: `http://127.0.0.1:${port}/`,
    bridgePort: bridge.port,
    startedAt,
    workerdPid: null,
    workerdStartTime: null,
    workerdExe: realpathSync(binary),
  };
  // workerd's console can quote request data (an internal error's stack): relayed like a child's output.
  const workerdLog = createLogRelay({
    tag: "workerd",
    sink: (level, line) => log(`${level} ${line}`),
    secrets: [secret, selKey.keyHex],
    burst: 1000,
    perSecond: 20,
  });
  let stopping = false;
  const workerdSupervisor = new WorkerdSupervisor({
    binary,
    args: ["serve", paths.workerdConfig, "--experimental"],
    env: { PATH: parentEnvironment().PATH ?? "/usr/bin:/bin" },
    setpriv,
    log,
    beforeSpawn: () => clearGatewaySocket(runtimeFolder),
    onSpawn: (child) => {
      if (child.stdout) workerdLog.attach(child.stdout, "info");
      if (child.stderr) workerdLog.attach(child.stderr, "warning");
      const pid = child.pid ?? null;
      record.workerdPid = pid;
      record.workerdStartTime = pid === null ? null : (identityOf(pid)?.startTime ?? null);
      if (!stopping) writeGatewayFile(paths, record);
    },
    onRestarted: async (attempt, exit) => {
      const restartedAt = Date.now();
      const child = workerdSupervisor.current()!;
      await waitForGateway(paths.home, child, port, 15_000);
      openGatewayDoor(runtimeFolder);
      // What the requests that died with workerd left half done is settled now, not at the next start.
      void runtime.settlement.afterGatewayRestart(restartedAt);
      log(`info workerd restarted (restart ${attempt}) after ${exit.signal ?? `exit ${exit.exitCode}`}`);
      await appendSecurityRow(paths.home, "workerd_restarted", {
        restart: attempt,
        signal: exit.signal ?? null,
        exit_code: exit.exitCode ?? null,
      }).catch(() => undefined);
      await runtime.reportAllBackends();
    },
  });

  const witness = startWitnessPoster(
    paths.selWitness,
    (method, path, body) => callGateway(paths.home, "sel-witness", method, path, body),
    log,
  );
  const anchor = startAnchorWriter(
    paths.selAnchor,
    async (held) =>
      (
        await callGateway(
          paths.home,
          "sel-anchor",
          "GET",
          `/api/internal/sel/head${held ? `?anchor_seq=${held.seq}&anchor_mac=${held.mac}` : ""}`,
        )
      ).body,
    log,
  );
  let manifestTimer: NodeJS.Timeout | null = null;
  const recordState = () => {
    try {
      writeStateManifest(paths.home, paths.state, STORE_NAMESPACES, readAnchor(paths.selAnchor)?.seq ?? null);
    } catch (error) {
      log(`warning state manifest: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  const stopAll = async (exitCode: number) => {
    if (stopping) return;
    stopping = true;
    const hardStop = setTimeout(() => process.exit(exitCode), 9_500);
    try {
      if (manifestTimer) clearInterval(manifestTimer);
      reserve.stop();
      await runtime
        .stopAll()
        .catch((error) => log(`stopping backends: ${error instanceof Error ? error.message : String(error)}`));
      await appendSecurityRow(paths.home, "gateway_stopped", { port }).catch(() => undefined);
      await anchor.flush().catch(() => undefined);
    } finally {
      anchor.stop();
      witness.stop();
      await workerdSupervisor.stop();
      if (record.workerdPid !== null) recordState();
      bridge.server.close();
      bridge.server.closeAllConnections();
      removeGatewayFile(paths);
      clearGatewaySocket(runtimeFolder);
      clearSlotSockets(runtimeFolder);
      releaseRuntimeDir(runtimeFolder);
      gatewayLog.close();
      clearTimeout(hardStop);
      process.exit(exitCode);
    }
  };
  process.on("SIGINT", () => void stopAll(0));
  process.on("SIGTERM", () => void stopAll(0));

  try {
    const workerd = workerdSupervisor.start();
    try {
      await waitForGateway(paths.home, workerd, port, 15_000);
      openGatewayDoor(runtimeFolder);
    } catch (error) {
      // workerd could not take the port (someone took it meanwhile): nothing was sent to it.
      if (workerd.pid !== undefined && !isPortListenerOwnedBy(workerd.pid, port) && !(await isPortFree(bindHost, port)))
        throw new Error(portInUseMessage(port), { cause: error });
      throw error;
    }
    await appendSecurityRow(paths.home, "gateway_started", { port, auth_mode: mode.mode });
    // The log holds its own epoch key now: the seed leaves the config (a restarted workerd reads it).
    if (selKey.keyHex !== "")
      writePrivateFile(
        paths.workerdConfig,
        renderWorkerdConfig({ ...workerdConfigInput, bindings: { ...workerdConfigInput.bindings, SEL_KEY: "" } }),
      );
    if (losses.length > 0) {
      await appendSecurityRow(paths.home, "state_loss_accepted", {
        stores: losses.map((loss) => ({ store: loss.store, what: loss.what, known_rows: loss.knownRows })),
      });
      process.stderr.write(
        `personalclaw: warning: continuing without lost state (--accept-state-loss):\n${describeStateLoss(paths.state, manifest!, losses)}\n`,
      );
    }
    if (anchorLost !== null) await appendSecurityRow(paths.home, "sel_anchor_lost", { anchor: anchorLost }, "error");
    await anchor.flush().catch((error) => log(`sel anchor: ${error instanceof Error ? error.message : String(error)}`));
    await runtime.syncNativeApps();
    await runtime.startEnabledBackends();
    const link = await callGateway(paths.home, "start", "POST", "/api/auth/startup-link", {});
    if (link.status !== 200) throw new Error(`the startup sign-in link could not be minted (${link.status})`);
    recordState();
    manifestTimer = setInterval(recordState, STATE_MANIFEST_INTERVAL_MS);
    manifestTimer.unref();
    const url: string = link.body.url;
    // The seed is shown once, at the first start, to the owner's terminal only (never to gateway.log).
    const code = selKey.firstSeed === null ? null : verificationCode(selKey.firstSeed);
    if (code !== null && !options.jsonReady) {
      process.stdout.write(
        `The security log's verification code (write it down; it is shown only now${settings.seedPassphrase ? "; sealed to your passphrase in sel_seed.sealed" : ""}):\n  ${code}\n`,
      );
    }
    if (options.jsonReady) {
      process.stdout.write(
        `${JSON.stringify({ url, port, home: paths.home, pid: process.pid, ...(code !== null ? { sel_verification_code: code } : {}) })}\n`,
      );
    } else {
      process.stdout.write(
        `PersonalClaw is running at http://127.0.0.1:${port}/ — sign in: ${url} (a new link at any time: ${commandHint("token")})\n`,
      );
    }
  } catch (error) {
    const full = storageFullReason(error);
    const why =
      full !== null
        ? `the disk holding ${paths.home} is full (${full}); free some space and start again`
        : error instanceof Error
          ? error.message
          : String(error);
    process.stderr.write(`personalclaw: start failed: ${why}\n`);
    await stopAll(1);
    return 1;
  }
  await new Promise(() => undefined);
  return 0;
}

/** Appends a security-log row as the CLI (the gateway's start and stop). */
export async function appendSecurityRow(
  home: string,
  kind: string,
  detail: Record<string, unknown>,
  outcome: "info" | "error" = "info",
): Promise<void> {
  const answer = await callGateway(home, "lifecycle", "POST", "/api/internal/sel/append", {
    kind,
    principal: "cli",
    outcome,
    subject: "",
    detail,
  });
  if (answer.status !== 200)
    throw new Error(
      `the security log refused the ${kind} row: ${answer.body?.error?.message ?? `status ${answer.status}`}`,
    );
}
