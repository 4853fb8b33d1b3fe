// Runs one app MCP server confined, for as long as its agent keeps it: the long-lived sibling
// of run-confined.ts, with the same hardening steps in the same order (buildChildEnv,
// wrapInSandbox, applyBounds, spawnChild) and no rule of its own. The differences are what an
// MCP server is: its stdin and stdout are the protocol (relayed between the agent and the
// child byte for byte), its working directory is the app's folder (MCP-03), it has no time
// cap, and a start is over once it first answers (or exits before it did). A silent first start
// (a package runner installing) is never cut off (MCP-05).
import type { ChildProcess } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { buildChildEnv, credentialValuesOf, egressEnvironment } from "./child-env";
import { createLogRelay, type LogRelay } from "./log-relay";
import { serverEnvironment } from "./server-env";
import { safeLine } from "../../kernel/text/text-safety";
import type { HostPattern } from "../../kernel/rules/network-grant";
import { mcpServerFds, spawnChild } from "../supervisor/spawn-child";
import { childEnd, confineCommand, placeUnderBounds, type ChildEnd, type ConfinementContext } from "./run-confined";
import { signalProcessGroup } from "../process-group";
import { storageLimitReason, storageShares, watchStorage } from "./storage-limit";
import {
  closeGrantedFolders,
  folderEnvironment,
  folderMounts,
  openGrantedFolders,
  withFolderDescriptors,
  type GrantedFolderRefusal,
  type OpenedFolder,
} from "./granted-folders";
import type { FolderGrant } from "../../kernel/contracts/folder-grants";
import { placeSecrets, type BrokeredSecret } from "../egress/secret-placeholders";

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
  /** The app's placeholder secrets: the server gets a new placeholder for each, its broker writes the value. */
  brokered?: readonly BrokeredSecret[];
  /** Aborted when the server must end (its app was disabled or updated, a signal): its whole group is killed. */
  stop?: AbortSignal;
  /** Told the server's pid (the leader of its process group) once it is spawned. */
  onSpawned?: (pid: number) => void;
  /** Told when the server was ended because its app's data/ grew past its storage limit (a security-log row). */
  onStorageLimit?: (usedBytes: number, dataBytes: number) => void;
  /** Told when a granted folder is no longer the one the owner chose and the start is refused (a security-log row). */
  onFolderRefused?: (refusal: GrantedFolderRefusal) => void;
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
  // The agent's log of the server is where its owner looks first: a start refused here says why there too.
  const notStarted = (reason: string) => {
    io.stderr.write(`personalclaw: ${run.app.name}:${run.server} was not started: ${safeLine(reason)}\n`);
    report({ ok: false, exitCode: null, reason });
    return 1;
  };
  // A stop asked for while it was being set up (an update holding its app) holds: nothing starts.
  if (run.stop?.aborted) return notStarted("stopped before it started");
  const sandboxed = ctx.sandboxMode === "on";
  if (sandboxed && !ctx.sandbox.ok)
    return notStarted(`sandbox_unavailable: ${ctx.sandbox.reason ?? "bwrap is unavailable"}`);

  // 1. The environment: the allowlist, then the manifest's own values, then the egress relay.
  const prepared = await serverEnvironmentStep(run, ctx, sandboxed);
  if (!prepared.ok) return notStarted(prepared.reason);
  const { env, pathEnv, folders, brokerKey, egressSocket } = prepared;
  // The run's broker ends with the run, whichever step ends it.
  const stopBroker = async () => {
    if (egressSocket) await ctx.egress?.stop(brokerKey);
  };

  // 2-3. The filesystem view (its app folder read-only, its working directory), namespaces and bounds.
  const confined = confineCommand(ctx, {
    appDir: run.app.appDir,
    writable: run.app.hasStorage ? [run.app.dataDir] : [],
    cwd: run.app.appDir,
    command: run.command,
    egressSocket,
    folders: folderMounts(folders),
    groupName: `${run.app.name}-mcp`,
    pathEnv,
  });
  if (!confined.ok) {
    closeGrantedFolders(folders);
    await stopBroker();
    return notStarted(confined.reason);
  }
  const { cmd, group, useGroup } = confined;

  if (run.stop?.aborted) {
    closeGrantedFolders(folders);
    await stopBroker();
    return notStarted("stopped before it started");
  }

  // 4. Spawn, least reversible last.
  const child = spawnChild(
    { ...cmd, cwd: run.app.appDir },
    {
      env,
      stdio: withFolderDescriptors(mcpServerFds(sandboxed, useGroup), sandboxed ? folders : []),
      boxed: sandboxed,
      log: ctx.log,
    },
  );
  closeGrantedFolders(folders);
  const relay = relayServerIo(child, run, io, credentialValuesOf(env), report);
  const exited = childEnd(child);
  const stop = stoppableServer(child, run, ctx);

  if (group) {
    const refused = await placeUnderBounds(child, group, exited);
    if (refused !== null) {
      await stopBroker();
      return notStarted(refused);
    }
  }

  const { end, storageUsed, dataBytes } = await watchServerToEnd(child, exited, run, ctx, stop);
  io.stdin.unpipe(child.stdin ?? undefined);
  signalProcessGroup(child.pid, "SIGKILL");
  group?.remove();
  await stopBroker();
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

/**
 * Step 1 of a server: the allowlist, then the manifest's own values, then the granted folders
 * (opened here, each checked again: one that is no longer the folder the owner chose refuses
 * the start, granted-folders.ts) and the egress relay of its own broker. `pathEnv` is the
 * bridge's PATH, never one the manifest declared: it picks what runs, and realPython runs it on
 * the host.
 */
async function serverEnvironmentStep(
  run: McpServerRun,
  ctx: ConfinementContext,
  sandboxed: boolean,
): Promise<
  | {
      ok: true;
      env: Record<string, string>;
      pathEnv: string | undefined;
      folders: OpenedFolder[];
      brokerKey: string;
      egressSocket: string | undefined;
    }
  | { ok: false; reason: string }
> {
  const { env: allowlisted } = buildChildEnv(ctx.parentEnv, {
    kind: "mcp",
    app: { name: run.app.name, hasStorage: run.app.hasStorage, dataDir: run.app.dataDir },
    home: ctx.home,
    passthrough: ctx.passthrough,
    sandboxed,
  });
  const env = serverEnvironment(run.declaredEnv, allowlisted, run.app);
  const granted = openGrantedFolders(run.folders ?? [], {
    home: ctx.home,
    ownerHome: ctx.ownerHome,
    identity: ctx.sandbox.childIdentity ?? null,
  });
  if (!granted.ok) {
    run.onFolderRefused?.(granted);
    return { ok: false, reason: `${granted.code}: ${granted.reason}` };
  }
  Object.assign(env, folderEnvironment(granted.folders, sandboxed));
  const brokerKey = `${run.app.name}:mcp:${run.server}:${process.pid}`;
  let egressSocket: string | undefined;
  if (sandboxed && run.egress.length > 0 && ctx.egress) {
    const { placed, env: placeholders } = placeSecrets(run.brokered ?? []);
    egressSocket = await ctx.egress.start(brokerKey, run.app.name, run.egress, placed);
    Object.assign(env, egressEnvironment());
    // Never over a name the manifest or the bridge set (the secret's name is checked at preview).
    for (const [name, value] of Object.entries(placeholders)) if (!(name in env)) env[name] = value;
  }
  return { ok: true, env, pathEnv: allowlisted.PATH, folders: granted.folders, brokerKey, egressSocket };
}

/**
 * The server's stdio: its stdout reaches the agent byte for byte (its first byte is the start
 * answered), the agent's stdin reaches it, and its stderr reaches the agent line by line as the
 * bridge log gets a backend's: every value it was handed and every credential shape masked,
 * escapes made visible, each line tagged with the server so none passes for the gateway's own, a
 * flood rate limited.
 */
function relayServerIo(
  child: ChildProcess,
  run: McpServerRun,
  io: McpServerIo,
  secrets: string[],
  report: (outcome: McpStartOutcome) => void,
): LogRelay {
  const relay = createLogRelay({
    tag: `${run.app.name}:${run.server}`,
    sink: (_level, line) => io.stderr.write(`${line}\n`),
    secrets,
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
  return relay;
}

/**
 * Makes the spawned server stoppable by `run.stop` (its whole process group is killed), then
 * announces its pid: only once it can be stopped is it announced, and a failure to note it
 * stops nothing. Answers the stop.
 */
function stoppableServer(child: ChildProcess, run: McpServerRun, ctx: ConfinementContext): () => void {
  // The caller turns its signals into `stop` (mcp run: SIGTERM and SIGINT, for its whole life).
  const stop = () => signalProcessGroup(child.pid, "SIGKILL");
  run.stop?.addEventListener("abort", stop, { once: true });
  if (run.stop?.aborted) stop();
  if (child.pid !== undefined) {
    try {
      run.onSpawned?.(child.pid);
    } catch (error) {
      ctx.log(`${run.app.name}:${run.server}: could not record the server's process group: ${String(error)}`);
    }
  }
  return stop;
}

/**
 * Waits for the server's end; data/ grown past its share of the app's storage limit ends it
 * first, as a backend is ended. Answers the end and, when the limit ended it, what data/ used.
 */
async function watchServerToEnd(
  child: ChildProcess,
  exited: Promise<ChildEnd>,
  run: McpServerRun,
  ctx: ConfinementContext,
  stop: () => void,
): Promise<{ end: ChildEnd; storageUsed: number | null; dataBytes: number }> {
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
  return { end, storageUsed, dataBytes };
}
