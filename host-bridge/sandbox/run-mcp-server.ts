// Runs one app MCP server confined, for as long as its agent keeps it: the long-lived sibling
// of run-confined.ts, with the same hardening steps in the same order (buildChildEnv,
// wrapInSandbox, applyBounds, spawnChild) and no rule of its own. The differences are what an
// MCP server is: its stdin and stdout are the protocol (relayed between the agent and the
// child byte for byte), its working directory is the app's folder (MCP-03), it has no time
// cap, and a start is over once it first answers (or exits before it did). A silent first start
// (a package runner installing) is never cut off (MCP-05).
import type { Readable, Writable } from "node:stream";
import { buildChildEnv, credentialValuesOf, egressEnvironment } from "./child-env";
import { createLogRelay } from "./log-relay";
import { serverEnvironment } from "./server-env";
import type { HostPattern } from "../../kernel/rules/network-grant";
import { mcpServerFds, spawnChild } from "../supervisor/spawn-child";
import { confineCommand, placeUnderBounds, type ConfinementContext } from "./run-confined";
import { signalProcessGroup } from "../process-group";
import { storageLimitReason, storageShares, watchStorage } from "./storage-limit";
import {
  closeGrantedFolders,
  folderEnvironment,
  folderMounts,
  openGrantedFolders,
  withFolderDescriptors,
} from "./granted-folders";
import type { FolderGrant } from "../../kernel/contracts/folder-grants";

export interface McpServerRun {
  app: { name: string; appDir: string; dataDir: string; hasStorage: boolean };
  server: string;
  command: { file: string; args: string[] };
  /** The values the manifest declares for its env names (the names are part of the consent). */
  declaredEnv: Record<string, string>;
  /** The hosts its egress broker lets it reach (none: no network at all). */
  egress: readonly HostPattern[];
  /** The folders the owner granted the app: checked and opened again here, bound at /folders/<need>. */
  folders?: readonly FolderGrant[];
  /** Aborted when the server must end (its app was disabled or updated, a signal): its whole group is killed. */
  stop?: AbortSignal;
  /** Told the server's pid (the leader of its process group) once it is spawned. */
  onSpawned?: (pid: number) => void;
  /** Told when the server was ended because its app's data/ grew past its storage limit (a security-log row). */
  onStorageLimit?: (usedBytes: number, dataBytes: number) => void;
}

/** Lines of a server's stderr the agent gets at once, then per second. */
const STDERR_BURST = 500;
const STDERR_PER_SECOND = 20;
/** How long an ended server's stderr may take to drain before its start is reported. */
const STDERR_DRAIN_MS = 1000;

/** How a start went: `answered` once its first byte reached the agent; otherwise why it ended first. */
export type McpStartOutcome = { ok: true } | { ok: false; exitCode: number | null; reason: string };

export interface McpServerIo {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
}

/**
 * Starts the server confined and relays its stdio until it exits; `onStart` is called once,
 * when it first answers or when it ends without having answered. Resolves with its exit code.
 */
export async function runMcpServer(
  run: McpServerRun,
  ctx: ConfinementContext,
  io: McpServerIo,
  onStart: (outcome: McpStartOutcome) => void,
): Promise<number> {
  let reported = false;
  const report = (outcome: McpStartOutcome) => {
    if (reported) return;
    reported = true;
    onStart(outcome);
  };
  // A stop asked for while it was being set up (an update holding its app) holds: nothing starts.
  const stoppedBeforeStart = () => {
    report({ ok: false, exitCode: null, reason: "stopped before it started" });
    return 1;
  };
  if (run.stop?.aborted) return stoppedBeforeStart();
  const sandboxed = ctx.sandboxMode === "on";
  if (sandboxed && !ctx.sandbox.ok) {
    report({
      ok: false,
      exitCode: null,
      reason: `sandbox_unavailable: ${ctx.sandbox.reason ?? "bwrap is unavailable"}`,
    });
    return 1;
  }

  // 1. The environment: the allowlist, then the manifest's own values, then the egress relay.
  const { env: allowlisted } = buildChildEnv(ctx.parentEnv, {
    kind: "mcp",
    app: { name: run.app.name, hasStorage: run.app.hasStorage, dataDir: run.app.dataDir },
    home: ctx.home,
    passthrough: ctx.passthrough,
    sandboxed,
  });
  const env = serverEnvironment(run.declaredEnv, allowlisted, run.app);
  // A granted folder that is no longer the one the owner chose refuses the start (granted-folders.ts).
  const granted = openGrantedFolders(run.folders ?? [], {
    home: ctx.home,
    ownerHome: ctx.ownerHome,
    identity: ctx.sandbox.childIdentity ?? null,
  });
  if (!granted.ok) {
    report({ ok: false, exitCode: null, reason: `${granted.code}: ${granted.reason}` });
    return 1;
  }
  Object.assign(env, folderEnvironment(granted.folders, sandboxed));
  const brokerKey = `${run.app.name}:mcp:${run.server}:${process.pid}`;
  let egressSocket: string | undefined;
  if (sandboxed && run.egress.length > 0 && ctx.egress) {
    egressSocket = await ctx.egress.start(brokerKey, run.app.name, run.egress);
    Object.assign(env, egressEnvironment());
  }

  // 2-3. The filesystem view (its app folder read-only, its working directory), namespaces and bounds.
  const confined = confineCommand(ctx, {
    appDir: run.app.appDir,
    writable: run.app.hasStorage ? [run.app.dataDir] : [],
    cwd: run.app.appDir,
    command: run.command,
    egressSocket,
    folders: folderMounts(granted.folders),
    groupName: `${run.app.name}-mcp`,
    // The bridge's PATH, never one the manifest declared: it picks what runs, and realPython runs it on the host.
    pathEnv: allowlisted.PATH,
  });
  if (!confined.ok) {
    closeGrantedFolders(granted.folders);
    report({ ok: false, exitCode: null, reason: confined.reason });
    return 1;
  }
  const { cmd, group, useGroup } = confined;

  if (run.stop?.aborted) {
    closeGrantedFolders(granted.folders);
    if (egressSocket) await ctx.egress?.stop(brokerKey);
    return stoppedBeforeStart();
  }

  // 4. Spawn, least reversible last.
  const child = spawnChild(
    { ...cmd, cwd: run.app.appDir },
    {
      env,
      stdio: withFolderDescriptors(mcpServerFds(sandboxed, useGroup), sandboxed ? granted.folders : []),
      boxed: sandboxed,
      log: ctx.log,
    },
  );
  closeGrantedFolders(granted.folders);

  // Its stderr reaches the agent line by line as the bridge log gets a backend's: every value
  // it was handed and every credential shape masked, escapes made visible, each line tagged
  // with the server so none passes for the gateway's own, a flood rate limited.
  const relay = createLogRelay({
    tag: `${run.app.name}:${run.server}`,
    sink: (_level, line) => io.stderr.write(`${line}\n`),
    secrets: credentialValuesOf(env),
    burst: STDERR_BURST,
    perSecond: STDERR_PER_SECOND,
  });
  if (child.stderr) relay.attach(child.stderr, "info");
  child.stdout?.on("data", (chunk: Buffer) => {
    report({ ok: true });
    io.stdout.write(chunk);
  });
  if (child.stdin) {
    io.stdin.pipe(child.stdin);
    child.stdin.on("error", () => {});
  }
  const exited = new Promise<{ code: number | null; signal: string | null; error?: string }>((resolve) => {
    child.once("exit", (code, signal) => resolve({ code, signal }));
    child.once("error", (err) => resolve({ code: null, signal: null, error: err.message }));
  });
  // The caller turns its signals into `stop` (mcp run: SIGTERM and SIGINT, for its whole life).
  const stop = () => signalProcessGroup(child.pid, "SIGKILL");
  run.stop?.addEventListener("abort", stop, { once: true });
  if (run.stop?.aborted) stop();
  // Only once it can be stopped is the server announced; a failure to note it stops nothing.
  if (child.pid !== undefined) {
    try {
      run.onSpawned?.(child.pid);
    } catch (error) {
      ctx.log(`${run.app.name}:${run.server}: could not record the server's process group: ${String(error)}`);
    }
  }

  if (group) {
    const refused = await placeUnderBounds(child, group, exited);
    if (refused !== null) {
      report({ ok: false, exitCode: null, reason: refused });
      return 1;
    }
  }

  // data/ grown past its share of the app's storage limit: the server is ended, as a backend is.
  const { dataBytes } = storageShares(ctx.limits.storageBytes);
  let storageUsed: number | null = null;
  const storage = run.app.hasStorage
    ? watchStorage({
        dataDir: run.app.dataDir,
        dataBytes,
        onExceeded: (used) => {
          storageUsed = used;
          stop();
          run.onStorageLimit?.(used, dataBytes);
        },
      })
    : null;
  const end = await exited;
  storage?.stop();
  io.stdin.unpipe(child.stdin ?? undefined);
  signalProcessGroup(child.pid, "SIGKILL");
  group?.remove();
  if (egressSocket) await ctx.egress?.stop(brokerKey);
  // Its last lines, once the pipe has drained (a moment at most: its whole group is gone).
  await Promise.race([relay.finished(), new Promise((resolve) => setTimeout(resolve, STDERR_DRAIN_MS).unref())]);
  const lines = relay
    .lastLines()
    .map((line) => line.trim())
    .filter((line) => line !== "");
  const lastStderrLine = lines.at(-1)?.slice(0, 400) ?? null;
  const exitCode = end.code;
  const why = end.error
    ? `could not be started: ${end.error}`
    : storageUsed !== null
      ? `stopped at its storage limit: ${storageLimitReason(storageUsed, dataBytes)}`
      : (lastStderrLine ?? (end.signal ? `killed by ${end.signal}` : `exit status ${end.code}`));
  if (storageUsed !== null) ctx.log(`${run.app.name}:${run.server}: ${why}`);
  report({ ok: false, exitCode, reason: why });
  return exitCode ?? 1;
}
