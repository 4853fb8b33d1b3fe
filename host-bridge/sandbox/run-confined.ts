// Runs one short-lived app child to its end, confined: an install or uninstall hook, a venv
// creation, a pip or npm install. The same hardening steps as a backend, in the same order
// (buildChildEnv, wrapInSandbox, applyBounds, spawnChild), so nothing of a bundle ever runs
// outside the box, at install time included. Expected failures are results. A hook may be handed
// granted folders (only those whose need says `hooks: true`); an installer never is.
import type { ChildProcess } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import type { Writable } from "node:stream";
import { buildChildEnv, credentialValuesOf, egressEnvironment, type ChildKind } from "./child-env";
import type { HostPattern } from "../../kernel/rules/network-grant";
import type { EgressBrokers } from "../egress/brokers";
import { wrapInSandbox, type SandboxAvailability, type SandboxMode } from "./bubblewrap";
import {
  boundCommand,
  createChildGroup,
  describeLimits,
  LIMIT_WORDS,
  type BoundsAvailability,
  type ChildGroup,
  type LimitHit,
  type Limits,
} from "./bounds";
import { createLogRelay } from "./log-relay";
import { closeInheritedFds, SANDBOX_BLOCK_FD, SANDBOX_INFO_FD, spawnChild } from "../supervisor/spawn-child";
import { signalProcessGroup } from "../process-group";
import { storageShares, watchStorage } from "./storage-limit";
import {
  closeGrantedFolders,
  folderEnvironment,
  folderMounts,
  openGrantedFolders,
  withFolderDescriptors,
} from "./granted-folders";
import type { FolderGrant } from "../../kernel/contracts/folder-grants";

export interface ConfinementContext {
  home: string;
  ownerHome: string;
  sandboxMode: SandboxMode;
  sandbox: SandboxAvailability;
  bounds: BoundsAvailability;
  limits: Limits;
  /** Brokers for runs with an egress grant; without it such a run has no network. */
  egress?: EgressBrokers;
  parentEnv: Readonly<Record<string, string | undefined>>;
  passthrough: readonly string[];
  /** The bridge log; child output arrives masked and escaped. */
  log: (line: string) => void;
}

export interface ConfinedRun {
  kind: Exclude<ChildKind, "backend">;
  app: { name: string; appDir: string; dataDir: string; hasStorage: boolean };
  command: { file: string; args: string[] };
  /** Inside the sandbox: the app folder for a hook, /tmp for an installer (never the bundle, whose files could shadow a module). */
  cwd: string;
  /** Folders inside appDir the child may write, besides data/ for an app with storage. */
  writable: readonly string[];
  /** The hosts this run may reach through a broker of its own (none: no network at all). */
  egress?: readonly HostPattern[];
  timeoutMs: number;
  /** e.g. `app notes hook`; prefixed to every relayed line. */
  tag: string;
  extraEnv?: Record<string, string>;
  /** A hook's granted folders (hookGrants): checked and opened again, bound at /folders/<need>; never an installer's. */
  folders?: readonly FolderGrant[];
}

export type ConfinedResult =
  | { ok: true; exitCode: 0; lastLines: string[] }
  | {
      ok: false;
      exitCode: number | null;
      signal: string | null;
      timedOut: boolean;
      limitsReached: LimitHit[];
      reason: string;
      lastLines: string[];
      /** What its egress broker refused during the run, in words ("host:port: why"), the likeliest cause of a failed fetch. */
      egressRefused?: string[];
    };

/**
 * Steps 2 and 3 of every confined child, one home for both runners: the command wrapped in
 * the sandbox (its view, namespaces and doors) and under its bounds, and the cgroup it must
 * join before it runs when bounds are by cgroup. Unsandboxed (sandbox.mode "off"), the plain command.
 */
export function confineCommand(
  ctx: ConfinementContext,
  opts: {
    appDir: string;
    writable: readonly string[];
    cwd: string;
    command: { file: string; args: string[] };
    egressSocket?: string;
    /** Granted folders on the child's descriptors (granted-folders.ts folderMounts); a hook's only when its need says so, never an installer's. */
    folders?: ReadonlyArray<{ need: string; fd: number; writable: boolean }>;
    groupName: string;
    pathEnv: string | undefined;
  },
):
  | { ok: true; cmd: { file: string; args: string[] }; group: ChildGroup | null; useGroup: boolean }
  | { ok: false; reason: string } {
  const sandboxed = ctx.sandboxMode === "on";
  const useGroup = sandboxed && ctx.bounds.mechanism === "cgroup";
  if (!sandboxed) return { ok: true, cmd: opts.command, group: null, useGroup };
  const wrapped = wrapInSandbox(
    { file: opts.command.file, args: opts.command.args, cwd: opts.cwd },
    {
      appDir: opts.appDir,
      writable: opts.writable,
      home: ctx.home,
      ownerHome: ctx.ownerHome,
      pathEnv: opts.pathEnv,
      ...(opts.egressSocket ? { egressSocket: opts.egressSocket } : {}),
      ...(opts.folders ? { folders: opts.folders } : {}),
      bwrapPath: ctx.sandbox.path,
      tmpSizeBytes: storageShares(ctx.limits.storageBytes).tmpBytes,
      userNamespace: ctx.sandbox.userNamespace,
      childIdentity: ctx.sandbox.childIdentity ?? null,
      infoFd: SANDBOX_INFO_FD,
      ...(useGroup ? { blockFd: SANDBOX_BLOCK_FD } : {}),
    },
  );
  const cmd = boundCommand(wrapped, ctx.limits, ctx.bounds);
  if (!useGroup) return { ok: true, cmd, group: null, useGroup };
  try {
    return { ok: true, cmd, group: createChildGroup(ctx.bounds, opts.groupName, ctx.limits), useGroup };
  } catch (error) {
    return {
      ok: false,
      reason: `its limits (${describeLimits(ctx.limits)}) could not be set up: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}

type ConfinedFailure = Extract<ConfinedResult, { ok: false }>;

/** A run that did not succeed: no exit code, signal, limit or output unless `more` gives them. */
function failedRun(reason: string, more: Partial<ConfinedFailure> = {}): ConfinedResult {
  return {
    ok: false,
    exitCode: null,
    signal: null,
    timedOut: false,
    limitsReached: [],
    reason,
    lastLines: [],
    ...more,
  };
}

/** How a child ended: its exit code and signal, or the error that kept it from starting. */
export interface ChildEnd {
  code: number | null;
  signal: string | null;
  error?: string;
}

/** Resolves once `child` has exited or failed to start; never rejects. */
export function childEnd(child: ChildProcess): Promise<ChildEnd> {
  return new Promise((resolve) => {
    child.once("exit", (code, signal) => resolve({ code, signal }));
    child.once("error", (err) => resolve({ code: null, signal: null, error: err.message }));
  });
}

/** Runs `run` confined to its end or its time cap; the sandbox missing is a refusal, not a fallback. */
export async function runConfined(run: ConfinedRun, ctx: ConfinementContext): Promise<ConfinedResult> {
  const sandboxed = ctx.sandboxMode === "on";
  if (sandboxed && !ctx.sandbox.ok)
    return failedRun(`sandbox_unavailable: ${ctx.sandbox.reason ?? "bwrap is unavailable"}`);

  // 1. The environment: an allowlist, HOME and TMPDIR in the private /tmp.
  const { env: allowlisted } = buildChildEnv(ctx.parentEnv, {
    kind: run.kind,
    app: { name: run.app.name, hasStorage: run.app.hasStorage, dataDir: run.app.dataDir },
    home: ctx.home,
    passthrough: ctx.passthrough,
    sandboxed,
  });
  const env = { ...allowlisted, ...(run.extraEnv ?? {}) };
  // A folder that is no longer the one the owner chose refuses the run, as it refuses a backend's start.
  const granted = openGrantedFolders(run.folders ?? [], {
    home: ctx.home,
    ownerHome: ctx.ownerHome,
    identity: ctx.sandbox.childIdentity ?? null,
  });
  if (!granted.ok) return failedRun(`${granted.code}: ${granted.reason}`);
  const folders = granted.folders;
  Object.assign(env, folderEnvironment(folders, sandboxed));
  const brokerKey = `${run.app.name}:${run.kind}:${process.hrtime.bigint()}`;
  let egressSocket: string | undefined;
  if (sandboxed && run.egress && run.egress.length > 0 && ctx.egress) {
    egressSocket = await ctx.egress.start(brokerKey, run.app.name, run.egress);
    Object.assign(env, egressEnvironment());
  }
  // The run's broker ends with the run, whichever step ends it, and says what it refused.
  let egressRefused: string[] = [];
  const stopBroker = async () => {
    if (!egressSocket) return;
    const refused = (await ctx.egress?.stop(brokerKey)) ?? [];
    egressRefused = refused.map(
      (d) => `${d.host}:${d.port} (${d.code ?? "egress_refused"}${d.reason ? `: ${d.reason}` : ""})`,
    );
  };

  // 2-3. The filesystem view, namespaces and bounds.
  const writable = [...run.writable, ...(run.app.hasStorage ? [run.app.dataDir] : [])];
  const confined = confineCommand(ctx, {
    appDir: run.app.appDir,
    writable,
    cwd: run.cwd,
    command: run.command,
    egressSocket,
    ...(folders.length > 0 ? { folders: folderMounts(folders) } : {}),
    groupName: run.app.name,
    pathEnv: env.PATH,
  });
  if (!confined.ok) {
    closeGrantedFolders(folders);
    await stopBroker();
    return failedRun(confined.reason);
  }
  const { cmd, group, useGroup } = confined;

  // 4. Spawn, least reversible last.
  const child = spawnChild(
    { ...cmd, cwd: run.cwd },
    {
      env,
      stdio: withFolderDescriptors(closeInheritedFds(sandboxed, useGroup), sandboxed ? folders : []),
      boxed: sandboxed,
      log: ctx.log,
    },
  );
  closeGrantedFolders(folders);
  const relay = createLogRelay({
    tag: run.tag,
    sink: (_level, line) => ctx.log(line),
    secrets: credentialValuesOf(env),
  });
  if (child.stdout) relay.attach(child.stdout, "info");
  if (child.stderr) relay.attach(child.stderr, "from-line");
  const exited = childEnd(child);

  if (group) {
    const refused = await placeUnderBounds(child, group, exited);
    if (refused !== null) {
      await stopBroker();
      return failedRun(refused);
    }
  }

  const { end, timedOut, limitsReached } = await watchToEnd(child, group, exited, run, ctx);
  await stopBroker();
  await Promise.race([relay.finished(), sleep(500)]);
  const lastLines = relay.lastLines();

  if (end.error) return failedRun(`could not be started: ${end.error}`, { lastLines });
  if (end.code === 0 && !timedOut) return { ok: true, exitCode: 0, lastLines };
  const reached = limitsReached.map((hit) => LIMIT_WORDS[hit]).join(" and ");
  const reason = timedOut
    ? `timed out after ${Math.round(run.timeoutMs / 1000)} s`
    : reached
      ? `stopped at ${reached} (${describeLimits(ctx.limits)})`
      : end.signal
        ? `killed by ${end.signal}`
        : `exit status ${end.code}`;
  if (reached) ctx.log(`${run.tag}: ${reason}`);
  return {
    ok: false,
    exitCode: end.code,
    signal: end.signal,
    timedOut,
    limitsReached,
    reason,
    lastLines,
    ...(egressRefused.length > 0 ? { egressRefused } : {}),
  };
}

/**
 * Waits for a confined child's end while three watches may end it first: its time cap, a
 * process limit reached (a bomb, not a slow step: ended at once rather than at the cap) and
 * data/ grown past its share of the storage limit. Once it has ended, anything it left in its
 * group goes with it and the group is removed. Answers the end and which watch ended it.
 */
async function watchToEnd(
  child: ChildProcess,
  group: ChildGroup | null,
  exited: Promise<ChildEnd>,
  run: ConfinedRun,
  ctx: ConfinementContext,
): Promise<{ end: ChildEnd; timedOut: boolean; limitsReached: LimitHit[] }> {
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    signalProcessGroup(child.pid, "SIGKILL");
  }, run.timeoutMs);
  let limitWatch = true;
  const watchLimits = async () => {
    while (limitWatch && group) {
      if (group.hits().includes("processes")) {
        signalProcessGroup(child.pid, "SIGKILL");
        group.remove();
        return;
      }
      await sleep(200);
    }
  };
  void watchLimits();
  let storageReached = false;
  const storage = run.app.hasStorage
    ? watchStorage({
        dataDir: run.app.dataDir,
        dataBytes: storageShares(ctx.limits.storageBytes).dataBytes,
        onExceeded: () => {
          storageReached = true;
          signalProcessGroup(child.pid, "SIGKILL");
        },
      })
    : null;
  const end = await exited;
  limitWatch = false;
  storage?.stop();
  clearTimeout(timer);
  signalProcessGroup(child.pid, "SIGKILL"); // anything it left in its group goes with it
  const limitsReached: LimitHit[] = [...(group?.hits() ?? []), ...(storageReached ? (["storage"] as const) : [])];
  group?.remove();
  return { end, timedOut, limitsReached };
}

/**
 * Puts a sandboxed child into its bounds group before it runs: bwrap names the child's pid on
 * the info descriptor, the pid joins the group, then the block descriptor lets it go. On any
 * failure the child is killed and the group removed; answers the reason, or null once placed.
 */
export async function placeUnderBounds(
  child: ChildProcess,
  group: ChildGroup,
  exited: Promise<unknown>,
): Promise<string | null> {
  if (child.pid === undefined) return null;
  try {
    const sandboxPid = await readChildPid(child.stdio[SANDBOX_INFO_FD] as NodeJS.ReadableStream | null, 5_000);
    if (sandboxPid === null) throw new Error("bwrap did not name its sandboxed child");
    group.attach(sandboxPid);
    (child.stdio[SANDBOX_BLOCK_FD] as Writable | null)?.end("go");
    return null;
  } catch (error) {
    signalProcessGroup(child.pid, "SIGKILL");
    group.remove();
    await exited;
    return `it could not be placed under its limits: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** bwrap's {"child-pid": N} from its info descriptor, or null when it ends without one. */
export function readChildPid(stream: NodeJS.ReadableStream | null, timeoutMs: number): Promise<number | null> {
  if (!stream) return Promise.resolve(null);
  return new Promise((resolve) => {
    let text = "";
    const done = (value: number | null) => {
      clearTimeout(timer);
      resolve(value);
    };
    const timer = setTimeout(() => done(null), timeoutMs);
    stream.on("data", (chunk: Buffer) => {
      if (text.length < 4096) text += chunk.toString("utf8");
      const match = /"child-pid"\s*:\s*(\d+)/.exec(text);
      if (match) done(Number(match[1]));
    });
    stream.once("end", () => done(null));
  });
}
