// Runs app backends as supervised children (BACK-01..08, 13..15, 19, 21): each gets its own
// port, secret, allowlisted env and sandbox; health is a standing, reversible observation; a
// backend that exits on its own is restarted with backoff unless held or failing to start.
import type { BackendStatus as ReportedBackendStatus } from "../../kernel/contracts/app-record";
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { errorMessage } from "../../kernel/contracts/errors.js";
import { MIN_SECRET_CHARS } from "../../kernel/text/text-safety.js";
import {
  sandboxAvailability,
  sandboxRefusal,
  wrapInSandbox,
  type SandboxAvailability,
  type SandboxMode,
} from "../sandbox/bubblewrap.js";
import {
  boundCommand,
  boundsAvailability,
  createChildGroup,
  DEFAULT_LIMITS,
  describeLimits,
  LIMIT_WORDS,
  type BoundsAvailability,
  type ChildGroup,
  type LimitHit,
  type Limits,
} from "../sandbox/bounds.js";
import { readChildPid } from "../sandbox/run-confined.js";
import { buildChildEnv, credentialValuesOf } from "../sandbox/child-env.js";

/** The port a confined backend listens on inside its own network namespace (PORT). */
export const CONFINED_BACKEND_PORT = 8080;
import { createLogRelay, type LogRelay } from "../sandbox/log-relay.js";
import { generateAppSecret, writeAppSecret } from "./app-secret.js";
import { pickFreePort } from "../free-port.js";
import { signalProcessGroup } from "../process-group.js";
import { isAcceptableHealthPath, probeHealth, type HealthEndpoint } from "./health-probe.js";
import { openSlotListener, SLOT_LISTEN_FD, withListener, type SlotListener } from "./slot-listener.js";
import { BACKEND_SLOTS, GATEWAY_SOCKET_FOLDER, slotSocketName } from "../../kernel/contracts/backend-slots.js";
import type { HostPattern } from "../../kernel/rules/network-grant.js";
import type { EgressBrokers } from "../egress/brokers.js";
import { egressEnvironment } from "../sandbox/child-env.js";
import { readProcStat } from "./process-identity.js";
import { reapOrphans, type ReapReport } from "./reap-orphans.js";
import { removeRunRecord, writeRunRecord } from "./run-records.js";
import { handOverEntry } from "../sandbox/child-identity.js";
import { closeInheritedFds, SANDBOX_BLOCK_FD, SANDBOX_INFO_FD, spawnChild } from "./spawn-child.js";
import type { Writable } from "node:stream";
import { APP_NAME_PATTERN } from "../../kernel/rules/app-name";
import {
  folderBytes,
  storageLimitReason,
  storageShares,
  watchStorage,
  type StorageWatch,
} from "../sandbox/storage-limit.js";

import {
  closeGrantedFolders,
  folderEnvironment,
  folderMounts,
  openGrantedFolders,
  withFolderDescriptors,
  type OpenedFolder,
} from "../sandbox/granted-folders.js";
import type { FolderGrant } from "../../kernel/contracts/folder-grants.js";

export type SupervisorLogLevel = "debug" | "info" | "warning" | "error";

export interface BackendSpec {
  /** The app name (kebab-case, as the manifest contract allows). */
  name: string;
  /** Absolute path of the installed app folder; the backend's working directory. */
  appDir: string;
  /** Absolute path of the app's data folder; writable only when hasStorage. */
  dataDir: string;
  hasStorage: boolean;
  backend: { command: string; args?: readonly string[]; healthCheck?: string };
  /** The hosts its egress broker lets through ("all": any public host); none: no network at all. */
  network?: readonly HostPattern[] | "all";
  /** The secrets the owner assigned, opened for this start: environment name → value; masked in its log by value. */
  secrets?: Readonly<Record<string, string>>;
  /** The folders the owner granted (effectiveGrants of the record's): checked and opened again at every run. */
  folders?: readonly FolderGrant[];
}

export interface BackendSupervisorOptions {
  /** PERSONALCLAW_HOME. */
  home: string;
  /** The owner's home folder, never shown to a backend; default os.homedir(). */
  ownerHome?: string;
  sandbox: { mode: SandboxMode };
  /** The bridge's runtime folder: slot sockets (how the gateway reaches a confined backend). */
  runtimeDir?: string;
  /** Egress brokers for backends with a network grant. */
  egress?: EgressBrokers;
  /** How backends are bounded (default: what boundsAvailability finds) and to what. */
  bounds?: BoundsAvailability;
  limits?: Limits;
  /** Called when a backend reaches one of its limits (the bridge writes a security-log row); storage names what data/ held. */
  onLimit?: (name: string, hit: LimitHit, limits: Limits, usedBytes?: number) => void;
  /** Called when the watchdog's restart of a backend is refused (a granted folder swapped for a link, say): a security-log row. */
  onRestartRefused?: (name: string, code: string) => void;
  /** The environment the bridge was launched with; only the allowlist reaches a child. */
  parentEnv: Readonly<Record<string, string | undefined>>;
  /** sandbox.env_passthrough from the operator's config.json. */
  passthrough: readonly string[];
  workspace?: string;
  gatewayPort?: number;
  /** A status change; a promise it answers is how long the gateway takes to learn it (stop waits for a stopping one). */
  onChange?: (name: string, status: SupervisedBackendStatus) => unknown;
  /** Bridge log; relayed child lines arrive here at info (stdout) and warning (stderr). */
  log?: (level: SupervisorLogLevel, msg: string) => void;
  healthIntervalMs?: number;
  healthMisses?: number;
  startTimeoutMs?: number;
  startupPollMs?: number;
  probeTimeoutMs?: number;
  stopGraceMs?: number;
  stopAllBudgetMs?: number;
  /** Upper bound of the delay before a backend that exited on its own is restarted. */
  watchdogMs?: number;
  /** First restart delay; doubles with each failed start, capped at watchdogMs. */
  restartBackoffMs?: number;
  /** Consecutive starts that end before health after which a backend stays down. */
  maxFailedStarts?: number;
}

export type BackendExit = NonNullable<ReportedBackendStatus["exit"]>;

/** The supervisor's view of a backend: what the gateway is told, plus its name and whether a transition holds it. */
export type SupervisedBackendStatus = ReportedBackendStatus & { name: string; held: boolean; slot: number | null };

export type StartResult =
  | { ok: true; name: string; port: number | null; slot: number | null; secret: string; pid: number | null }
  | {
      ok: false;
      code:
        | "sandbox_unavailable"
        | "app_secret_unwritable"
        | "backend_already_running"
        | "backend_spawn_failed"
        | "backend_slots_exhausted"
        | "folder_grant_changed";
      reason: string;
      cause?: unknown;
    };

export interface StopResult {
  ok: true;
  wasRunning: boolean;
  /** True when the grace ran out and the group was sent SIGKILL. */
  killed: boolean;
  exit: BackendExit | null;
}

interface Tracked {
  spec: BackendSpec;
  secret: string;
  generation: number;
  child: ChildProcess | null;
  pid: number | null;
  pgid: number | null;
  sandboxPgid: number | null;
  port: number | null;
  slot: number | null;
  startedAt: string | null;
  running: boolean;
  healthy: boolean;
  healthyThisRun: boolean;
  restarts: number;
  failedStarts: number;
  exit: BackendExit | null;
  reason?: string;
  relay: LogRelay | null;
  /** The cgroup of the current run, when bounds are by cgroup. */
  group: ChildGroup | null;
  /** The last line and line count of the newest status report (linesMoved). */
  reportedLastLine: string;
  reportedLineCount: number;
  /** Limits this run reached, noted before the bridge stopped it or the kernel killed it. */
  limitsReached: LimitHit[];
  /** The measure of data/ against its share of the storage limit, while a run with storage lasts. */
  storage: StorageWatch | null;
  stopping: boolean;
  gaveUp: boolean;
  exited: Promise<void>;
  timers: Set<NodeJS.Timeout>;
  restartTimer: NodeJS.Timeout | null;
}

/** The cause a row shows when a backend's folder is gone (removed by hand, or a half-done move). */
export const APP_FOLDER_MISSING = "app folder missing";
/** How long a stop waits for the gateway to learn that the backend is stopping before it signals it. */
const STOPPING_REPORT_WAIT_MS = 1_000;

type LaunchRefusal = Extract<StartResult, { ok: false }>;
type LaunchResult = { ok: true } | LaunchRefusal;

function spawnFailed(reason: string, cause?: unknown): LaunchRefusal {
  return cause === undefined
    ? { ok: false, code: "backend_spawn_failed", reason }
    : { ok: false, code: "backend_spawn_failed", reason, cause };
}

/** The app folder must be there; with storage, data/ is created first, since bwrap refuses to bind a missing folder. */
function prepareAppFolders(spec: BackendSpec): { ok: true } | LaunchRefusal {
  if (!existsSync(spec.appDir)) return spawnFailed(APP_FOLDER_MISSING);
  if (!spec.hasStorage) return { ok: true };
  try {
    mkdirSync(spec.dataDir, { recursive: true, mode: 0o700 });
    return { ok: true };
  } catch (cause) {
    return spawnFailed(`its data folder could not be created: ${String(cause)}`, cause);
  }
}

/** Resolves with the promise's value, or `fallback` after ms; the timer never outlives the race. */
function withTimeout<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<T>((resolve) => (timer = setTimeout(() => resolve(fallback), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Supervises app backends; one instance per bridge. */
export class BackendSupervisor {
  private readonly opts: Required<
    Omit<
      BackendSupervisorOptions,
      "onChange" | "log" | "workspace" | "gatewayPort" | "bounds" | "onLimit" | "onRestartRefused" | "egress"
    >
  > &
    Pick<BackendSupervisorOptions, "workspace" | "gatewayPort" | "bounds" | "egress">;
  private readonly onLimit: (name: string, hit: LimitHit, limits: Limits, usedBytes?: number) => void;
  private readonly onRestartRefused: (name: string, code: string) => void;
  private readonly tracked = new Map<string, Tracked>();
  private readonly held = new Set<string>();
  private readonly warnedHealthPaths = new Set<string>();
  private availability: SandboxAvailability | null = null;
  private readonly onChange: (name: string, status: SupervisedBackendStatus) => unknown;
  private readonly log: (level: SupervisorLogLevel, msg: string) => void;
  private readonly bridgeStartTime: string;

  constructor(options: BackendSupervisorOptions) {
    if (!path.isAbsolute(options.home)) throw new TypeError("BackendSupervisor needs an absolute home");
    if (options.sandbox.mode !== "on" && options.sandbox.mode !== "off")
      throw new TypeError(`sandbox.mode must be "on" or "off"`);
    this.opts = {
      home: options.home,
      ownerHome: options.ownerHome ?? os.homedir(),
      sandbox: options.sandbox,
      bounds: options.bounds,
      runtimeDir: options.runtimeDir ?? path.join(options.home, "run"),
      egress: options.egress,
      limits: options.limits ?? DEFAULT_LIMITS,
      parentEnv: options.parentEnv,
      passthrough: options.passthrough,
      workspace: options.workspace,
      gatewayPort: options.gatewayPort,
      healthIntervalMs: options.healthIntervalMs ?? 10_000,
      healthMisses: options.healthMisses ?? 3,
      startTimeoutMs: options.startTimeoutMs ?? 30_000,
      startupPollMs: options.startupPollMs ?? 250,
      probeTimeoutMs: options.probeTimeoutMs ?? 2_000,
      stopGraceMs: options.stopGraceMs ?? 5_000,
      stopAllBudgetMs: options.stopAllBudgetMs ?? 8_000,
      watchdogMs: options.watchdogMs ?? 30_000,
      restartBackoffMs: options.restartBackoffMs ?? 1_000,
      maxFailedStarts: options.maxFailedStarts ?? 3,
    };
    this.onChange = options.onChange ?? (() => {});
    this.onLimit = options.onLimit ?? (() => {});
    this.onRestartRefused = options.onRestartRefused ?? (() => {});
    this.log = options.log ?? (() => {});
    this.bridgeStartTime = readProcStat(process.pid)?.startTime ?? "";
  }

  /**
   * Starts an app's backend and resolves once it is spawned (health follows through onChange
   * and waitForHealth). The returned secret is the one written to <appDir>/.app_secret and
   * handed to the child; the integrator gives it to the gateway. It is kept across watchdog
   * restarts of this start, so the gateway's copy stays valid.
   */
  async start(spec: BackendSpec): Promise<StartResult> {
    if (!APP_NAME_PATTERN.test(spec.name)) throw new TypeError(`not an app name: ${JSON.stringify(spec.name)}`);
    if (!path.isAbsolute(spec.appDir) || !path.isAbsolute(spec.dataDir))
      throw new TypeError("appDir and dataDir must be absolute");
    const existing = this.tracked.get(spec.name);
    if (existing && (existing.running || existing.restartTimer !== null)) {
      return {
        ok: false,
        code: "backend_already_running",
        reason: errorMessage("backend_already_running", { app: spec.name }),
      };
    }
    if (this.opts.sandbox.mode === "on") {
      const refusal = sandboxRefusal("on", await this.sandboxAvailability());
      if (refusal) {
        this.log("error", `app ${spec.name} backend not started: ${refusal.reason}`);
        return { ok: false, ...refusal };
      }
    }
    // A start of an app this supervisor ran before keeps its count of revivals.
    const revivals = existing?.restarts ?? 0;
    const t: Tracked = {
      spec: { ...spec, backend: { ...spec.backend, args: [...(spec.backend.args ?? [])] } },
      secret: generateAppSecret(),
      generation: 0,
      child: null,
      pid: null,
      pgid: null,
      sandboxPgid: null,
      port: null,
      slot: null,
      startedAt: null,
      running: false,
      healthy: false,
      healthyThisRun: false,
      restarts: revivals,
      failedStarts: 0,
      exit: null,
      relay: null,
      group: null,
      reportedLastLine: "",
      reportedLineCount: 0,
      limitsReached: [],
      storage: null,
      stopping: false,
      gaveUp: false,
      exited: Promise.resolve(),
      timers: new Set(),
      restartTimer: null,
    };
    this.tracked.set(spec.name, t);
    const launched = await this.launch(t);
    if (!launched.ok) {
      t.reason = launched.reason;
      this.emit(t);
      return launched;
    }
    return { ok: true, name: spec.name, port: t.port, slot: t.slot, secret: t.secret, pid: t.pid };
  }

  /**
   * Restarts a backend on the owner's request: stopped (SIGTERM, then SIGKILL after the grace)
   * and started again with the same command and secret; it counts as a revival.
   */
  /** Restarts a backend with the same command; `secrets`, when given, replaces the ones it starts with. */
  async restart(
    name: string,
    secrets?: Readonly<Record<string, string>>,
    folders?: readonly FolderGrant[],
  ): Promise<{ ok: true } | Extract<StartResult, { ok: false }>> {
    const t = this.tracked.get(name);
    if (!t) return { ok: false, code: "backend_spawn_failed", reason: "it was never started by this gateway" };
    await this.stop(name);
    if (secrets !== undefined) t.spec = { ...t.spec, secrets };
    if (folders !== undefined) t.spec = { ...t.spec, folders };
    t.restarts += 1;
    t.failedStarts = 0;
    const launched = await this.launch(t);
    if (!launched.ok) {
      t.reason = `restart failed: ${launched.code}: ${launched.reason}`;
      this.emit(t);
    }
    return launched;
  }

  /** A held backend is never restarted by the watchdog (unload, update, core-incompatible). */
  hold(name: string): void {
    this.held.add(name);
    const t = this.tracked.get(name);
    if (t?.restartTimer) {
      clearTimeout(t.restartTimer);
      t.restartTimer = null;
      t.reason = `${t.reason ?? "exited"}; held, so not restarted`;
      this.emit(t);
    }
  }

  /** Lifts a hold; a backend that exited on its own while held is restarted. */
  release(name: string): void {
    this.held.delete(name);
    const t = this.tracked.get(name);
    if (t && !t.running && !t.stopping && !t.gaveUp && t.exit && t.restartTimer === null) this.scheduleRestart(t);
  }

  isHeld(name: string): boolean {
    return this.held.has(name);
  }

  /** The proxy secret of the backend's current start (kept across watchdog restarts), or null. */
  /** The names of every backend this supervisor tracks. */
  names(): string[] {
    return [...this.tracked.keys()];
  }

  secretOf(name: string): string | null {
    const t = this.tracked.get(name);
    return t && t.running ? t.secret : null;
  }

  status(name: string): SupervisedBackendStatus | null {
    const t = this.tracked.get(name);
    if (!t) return null;
    const status: SupervisedBackendStatus = {
      name,
      running: t.running,
      healthy: t.healthy,
      pid: t.pid,
      port: t.port,
      slot: t.slot,
      startedAt: t.startedAt,
      restarts: t.restarts,
      held: this.held.has(name),
      lastLines: t.relay?.lastLines() ?? [],
      exit: t.exit,
    };
    if (t.reason !== undefined) status.reason = t.reason;
    return status;
  }

  /** Resolves true once the backend answers its health check, false on timeout or when it stops running. */
  async waitForHealth(name: string, timeoutMs: number = this.opts.startTimeoutMs): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const t = this.tracked.get(name);
      if (t?.healthy) return true;
      if (!t || Date.now() >= deadline) return false;
      if (!t.running && t.restartTimer === null) return false;
      await sleep(5); // a start waits on this: its granularity is part of every start's time
    }
  }

  /** SIGTERM to the backend's group, SIGKILL after the grace; resolves when it has exited. */
  async stop(name: string, graceMs: number = this.opts.stopGraceMs): Promise<StopResult> {
    const t = this.tracked.get(name);
    if (!t) return { ok: true, wasRunning: false, killed: false, exit: null };
    t.stopping = true;
    this.clearTimers(t);
    if (!t.running) {
      if (t.reason?.endsWith("restarting")) t.reason = "stopped";
      return { ok: true, wasRunning: false, killed: false, exit: t.exit };
    }
    // The gateway learns that the backend is going before it is signalled, so the proxy answers
    // 503 at once from then on instead of sending requests to a backend that may take its whole
    // grace to exit, holding them meanwhile (bounded: a gateway that does not answer holds no stop).
    t.healthy = false;
    t.reason = "stopping";
    await withTimeout(this.announce(t), STOPPING_REPORT_WAIT_MS, undefined);
    // Sandboxed, the backend is in bwrap's own session: signal that group first, because bwrap
    // does not forward SIGTERM and its death would SIGKILL the backend with no grace.
    signalProcessGroup(t.sandboxPgid ?? t.pgid, "SIGTERM");
    let killed = false;
    if (!(await this.exitedWithin(t, graceMs))) {
      killed = true;
      // The sandbox first, so bwrap itself sees its child die, reaps it and exits.
      if (t.sandboxPgid !== null) {
        signalProcessGroup(t.sandboxPgid, "SIGKILL");
        await this.exitedWithin(t, 500);
      }
      signalProcessGroup(t.pgid, "SIGKILL");
      await this.exitedWithin(t, 2_000);
    }
    // Anything the backend started in its group and left behind goes with it.
    signalProcessGroup(t.pgid, "SIGKILL");
    await this.opts.egress?.stop(name);
    // Its last lines and the drop note reach the log before stop returns (bounded: a grandchild
    // that kept the pipes open must not hold the stop).
    if (t.relay) await withTimeout(t.relay.finished(), 500, undefined);
    return { ok: true, wasRunning: true, killed, exit: t.exit };
  }

  /** Stops every backend this supervisor spawned, concurrently, within stopAllBudgetMs (BACK-21). */
  async stopAll(): Promise<void> {
    const budget = this.opts.stopAllBudgetMs;
    const grace = Math.max(0, Math.min(this.opts.stopGraceMs, budget - 3_500)); // grace + kill waits + log drain fit the budget
    const names = [...this.tracked.keys()];
    const stops = Promise.allSettled(names.map((name) => this.stop(name, grace))).then(() => undefined);
    await withTimeout(stops, budget, undefined);
    for (const t of this.tracked.values()) {
      if (!t.running) continue;
      this.log("warning", `app ${t.spec.name} backend (pid ${t.pid}) outlived the stop budget; killed`);
      signalProcessGroup(t.sandboxPgid, "SIGKILL");
      signalProcessGroup(t.pgid, "SIGKILL");
    }
  }

  /** At bridge start: kills recorded backends whose bridge died, never a live sibling's or a reused pid. */
  reapOrphans(): Promise<ReapReport> {
    return reapOrphans(this.opts.home, { graceMs: this.opts.stopGraceMs, log: (msg) => this.log("warning", msg) });
  }

  /** Where the health probe reaches a backend: its slot's socket when confined, else its port. */
  private endpointOf(t: Tracked): HealthEndpoint {
    return t.slot !== null
      ? { socketPath: path.join(this.opts.runtimeDir, slotSocketName(t.slot)) }
      : { port: t.port as number };
  }

  /** The slot an app keeps while it is tracked here, or a free one; null when every slot is taken. */
  private slotFor(t: Tracked): number | null {
    if (t.slot !== null) return t.slot;
    const taken = new Set([...this.tracked.values()].map((other) => other.slot).filter((s): s is number => s !== null));
    for (let slot = 0; slot < BACKEND_SLOTS; slot += 1) if (!taken.has(slot)) return slot;
    return null;
  }

  private bounds(): BoundsAvailability {
    return this.opts.bounds ?? boundsAvailability(this.opts.parentEnv.PATH);
  }

  private async sandboxAvailability(): Promise<SandboxAvailability> {
    // Only a success is cached: once the owner installs bubblewrap the next start sees it.
    if (this.availability?.ok) return this.availability;
    const found = await sandboxAvailability(this.opts.parentEnv.PATH);
    if (found.ok) this.availability = found;
    return found;
  }

  /**
   * One run of the backend: the hardening steps in order, least reversible (spawn) last.
   *
   * Dying with the bridge: sandboxed, bwrap --die-with-parent has the kernel SIGKILL the backend
   * when the bridge dies. Unsandboxed (sandbox.mode = "off") there is no such guarantee: Node
   * cannot call prctl(PR_SET_PDEATHSIG) between fork and exec, so after a hard kill the backend
   * lives on until the next bridge's reapOrphans. (util-linux `setpriv --pdeathsig KILL` could be
   * prepended; not done, the opt-out stays the plain command.)
   */
  /**
   * One run of a backend, as named steps in one visible order: the cheap, reversible ones
   * first (address, folders, secret file, sandbox check, bounds group, descriptors, environment,
   * egress broker, socket slot), then the confined command, and last the spawn itself.
   */
  private async launch(t: Tracked): Promise<LaunchResult> {
    const generation = ++t.generation;
    t.stopping = false;
    t.gaveUp = false;
    const address = await this.reserveAddress(t);
    if (!address.ok) return address;
    if (t.stopping || generation !== t.generation) return spawnFailed("stopped before it started");
    const folders = prepareAppFolders(t.spec);
    if (!folders.ok) return folders;
    const room = await this.requireStorageRoom(t.spec);
    if (!room.ok) return room;
    const secretFile = this.writeSecretFile(t);
    if (!secretFile.ok) return secretFile;
    const sandbox = this.requireSandbox();
    if (!sandbox.ok) return sandbox;
    const bounds = this.bounds();
    const group = this.createBoundsGroup(t.spec, sandbox.availability, bounds);
    if (!group.ok) return group;
    const granted = this.openFolders(t.spec, sandbox.availability);
    if (!granted.ok) {
      group.group?.remove();
      return granted;
    }
    const stdio = withFolderDescriptors(
      closeInheritedFds(sandbox.availability !== null, group.group !== null),
      sandbox.availability !== null ? granted.folders : [],
    );
    const env = this.childEnvironment(t, address.port, sandbox.availability !== null);
    Object.assign(env, folderEnvironment(granted.folders, sandbox.availability !== null));
    const egress = await this.startEgressBroker(t.spec, sandbox.availability, env);
    if (!egress.ok) {
      closeGrantedFolders(granted.folders);
      group.group?.remove();
      return egress;
    }
    const listener = await this.openSlot(sandbox.availability, address.slot);
    if (!listener.ok) {
      closeGrantedFolders(granted.folders);
      group.group?.remove();
      return listener;
    }
    const command = this.confinedCommand(t.spec, env, sandbox.availability, bounds, {
      port: address.port,
      egressSocket: egress.socket,
      blocked: group.group !== null,
      folders: folderMounts(granted.folders),
    });
    const child = spawnChild(command, {
      env,
      stdio: listener.listener ? withListener(stdio, listener.listener.fd) : stdio,
      boxed: sandbox.availability !== null,
      log: (line) => this.log("warning", line),
    });
    // bwrap holds the folders now (its binds are made from its own copies of the descriptors).
    closeGrantedFolders(granted.folders);
    // The child holds the listening socket now: it moves to the slot's path, and the bridge lets go of it.
    listener.listener?.handOver();
    this.trackRun(t, generation, child, { env, port: address.port, slot: address.slot, group: group.group });
    if (child.pid !== undefined) {
      const confined = sandbox.availability !== null;
      if (confined) this.readSandboxStreams(t, generation, child);
      this.announceStarted(t, child.pid, confined, address, bounds);
      if (group.group) this.watchLimits(t, generation);
      if (t.spec.hasStorage) this.watchStorage(t, generation);
      this.emit(t);
      this.startupPoll(t, generation);
    }
    return { ok: true };
  }

  /**
   * Confined, the backend listens on CONFINED_BACKEND_PORT inside its own network namespace and
   * the gateway reaches it through a socket slot; unconfined, on a free host port.
   */
  private async reserveAddress(t: Tracked): Promise<{ ok: true; port: number; slot: number | null } | LaunchRefusal> {
    if (this.opts.sandbox.mode !== "on") {
      try {
        return { ok: true, port: await pickFreePort(), slot: null };
      } catch (cause) {
        return spawnFailed(`no free loopback port: ${String(cause)}`, cause);
      }
    }
    const slot = this.slotFor(t);
    if (slot === null)
      return {
        ok: false,
        code: "backend_slots_exhausted",
        reason: errorMessage("backend_slots_exhausted", { slots: BACKEND_SLOTS }),
      };
    // Claimed now, not when the child runs: a start awaits several steps before it spawns, and
    // a second app starting meanwhile (every app at a gateway start) would pick the same free
    // slot, so both listened at one socket path and the gateway sent one app's requests and
    // job fires to the other's backend (whose verifier refused them: 401).
    t.slot = slot;
    return { ok: true, port: CONFINED_BACKEND_PORT, slot };
  }

  /** The app's .app_secret, which its backend reads to verify the gateway's signature. */
  private writeSecretFile(t: Tracked): { ok: true } | LaunchRefusal {
    const written = writeAppSecret(t.spec.appDir, t.secret);
    if (written.ok) return { ok: true };
    const reason = errorMessage("app_secret_unwritable", { app: t.spec.name, reason: written.reason });
    this.log("error", reason);
    return { ok: false, code: "app_secret_unwritable", reason, cause: written.cause };
  }

  /** With sandbox.mode "on", a backend runs confined or not at all; null availability means unconfined by the owner's choice. */
  private requireSandbox(): { ok: true; availability: SandboxAvailability | null } | LaunchRefusal {
    if (this.opts.sandbox.mode !== "on") return { ok: true, availability: null };
    const sandbox = this.availability;
    if (sandbox?.ok) return { ok: true, availability: sandbox };
    return {
      ok: false,
      ...(sandboxRefusal("on", sandbox ?? { ok: false }) as { code: "sandbox_unavailable"; reason: string }),
    };
  }

  /** A confined backend bounded by cgroup gets its own group before it exists. */
  private createBoundsGroup(
    spec: BackendSpec,
    sandbox: SandboxAvailability | null,
    bounds: BoundsAvailability,
  ): { ok: true; group: ChildGroup | null } | LaunchRefusal {
    if (sandbox === null || bounds.mechanism !== "cgroup") return { ok: true, group: null };
    try {
      return { ok: true, group: createChildGroup(bounds, spec.name, this.opts.limits) };
    } catch (cause) {
      return spawnFailed(
        `its limits (${describeLimits(this.opts.limits)}) could not be set up: ${String(cause)}`,
        cause,
      );
    }
  }

  private childEnvironment(t: Tracked, port: number, sandboxed: boolean): Record<string, string> {
    const { spec } = t;
    return buildChildEnv(this.opts.parentEnv, {
      kind: "backend",
      app: {
        name: spec.name,
        hasStorage: spec.hasStorage,
        dataDir: spec.dataDir,
        secret: t.secret,
        port,
        secrets: spec.secrets,
      },
      home: this.opts.home,
      workspace: this.opts.workspace,
      gatewayPort: this.opts.gatewayPort,
      passthrough: this.opts.passthrough,
      log: (msg) => this.log("debug", msg),
      sandboxed,
    }).env;
  }

  /**
   * The owner's granted folders, checked and opened again for this run: one that is no longer
   * the folder the owner chose (swapped for a link, gone, opened up to nobody no more) refuses
   * the start with folder_grant_changed rather than run without it or with something else.
   */
  private openFolders(
    spec: BackendSpec,
    sandbox: SandboxAvailability | null,
  ): { ok: true; folders: OpenedFolder[] } | LaunchRefusal {
    const opened = openGrantedFolders(spec.folders ?? [], {
      home: this.opts.home,
      ownerHome: this.opts.ownerHome,
      identity: sandbox?.childIdentity ?? null,
    });
    if (opened.ok) return opened;
    this.log("error", `app ${spec.name} backend not started: ${opened.reason}`);
    return { ok: false, code: opened.code, reason: opened.reason };
  }

  /** A confined backend with a network grant reaches out only through its own broker; without one it has no network. */
  private async startEgressBroker(
    spec: BackendSpec,
    sandbox: SandboxAvailability | null,
    env: Record<string, string>,
  ): Promise<{ ok: true; socket: string | undefined } | LaunchRefusal> {
    const grant = spec.network ?? [];
    if (!sandbox || !this.opts.egress || (grant !== "all" && grant.length === 0))
      return { ok: true, socket: undefined };
    try {
      const socket = await this.opts.egress.start(spec.name, spec.name, grant);
      Object.assign(env, egressEnvironment());
      return { ok: true, socket };
    } catch (cause) {
      return spawnFailed(`its egress broker could not start: ${String(cause)}`, cause);
    }
  }

  private async openSlot(
    sandbox: SandboxAvailability | null,
    slot: number | null,
  ): Promise<{ ok: true; listener: SlotListener | null } | LaunchRefusal> {
    if (!sandbox || slot === null) return { ok: true, listener: null };
    try {
      return { ok: true, listener: await openSlotListener(this.opts.runtimeDir, slot) };
    } catch (cause) {
      return spawnFailed(`its socket slot could not be opened: ${String(cause)}`, cause);
    }
  }

  /** The backend's command wrapped in bubblewrap and its bounds; unconfined, the command as declared. */
  private confinedCommand(
    spec: BackendSpec,
    env: Record<string, string>,
    sandbox: SandboxAvailability | null,
    bounds: BoundsAvailability,
    run: {
      port: number;
      egressSocket: string | undefined;
      blocked: boolean;
      folders: ReturnType<typeof folderMounts>;
    },
  ) {
    const plain = { file: spec.backend.command, args: [...(spec.backend.args ?? [])], cwd: spec.appDir };
    if (!sandbox) return plain;
    const wrapped = wrapInSandbox(plain, {
      appDir: spec.appDir,
      writable: spec.hasStorage ? [spec.dataDir] : [],
      home: this.opts.home,
      ownerHome: this.opts.ownerHome,
      pathEnv: env.PATH,
      gateway: {
        listenFd: SLOT_LISTEN_FD,
        backendPort: run.port,
        ...(this.opts.gatewayPort !== undefined
          ? {
              callback: {
                socketDir: path.join(this.opts.runtimeDir, GATEWAY_SOCKET_FOLDER),
                port: this.opts.gatewayPort,
              },
            }
          : {}),
      },
      ...(run.egressSocket ? { egressSocket: run.egressSocket } : {}),
      folders: run.folders,
      bwrapPath: sandbox.path,
      tmpSizeBytes: storageShares(this.opts.limits.storageBytes).tmpBytes,
      userNamespace: sandbox.userNamespace,
      childIdentity: sandbox.childIdentity ?? null,
      infoFd: SANDBOX_INFO_FD,
      ...(run.blocked ? { blockFd: SANDBOX_BLOCK_FD } : {}),
    });
    // The secret a backend verifies the gateway's signature with is its own to read, whoever it runs as.
    handOverEntry(path.join(spec.appDir, ".app_secret"), sandbox.childIdentity ?? null);
    // The sandbox's own variables (a Node backend's in-process doors) win over the egress preload's NODE_OPTIONS, which they include.
    if ("env" in wrapped) Object.assign(env, wrapped.env);
    return { ...boundCommand(wrapped, this.opts.limits, bounds), cwd: spec.appDir };
  }

  /** The run's state, its masked log relay and its exit, recorded on the tracked backend. */
  private trackRun(
    t: Tracked,
    generation: number,
    child: ChildProcess,
    run: { env: Record<string, string>; port: number; slot: number | null; group: ChildGroup | null },
  ): void {
    const { spec } = t;
    t.group = run.group;
    t.limitsReached = [];
    const pid = child.pid ?? null;
    t.child = child;
    t.pid = pid;
    t.pgid = pid;
    t.sandboxPgid = null;
    t.port = this.opts.sandbox.mode === "on" ? null : run.port;
    t.slot = run.slot;
    t.startedAt = new Date().toISOString();
    t.running = pid !== null;
    t.healthy = false;
    t.healthyThisRun = false;
    t.reason = undefined;
    const relay = createLogRelay({
      tag: `app ${spec.name} backend (pid ${pid ?? "none"})`,
      sink: (level, line) => this.log(level, line),
      // Every assigned secret is masked by value, however short, on top of the passthrough values.
      secrets: [
        ...new Set([
          ...credentialValuesOf(run.env),
          ...Object.values(spec.secrets ?? {}).filter((v) => v.length >= MIN_SECRET_CHARS),
        ]),
      ].sort((a, b) => b.length - a.length),
    });
    t.relay = relay;
    if (child.stdout) relay.attach(child.stdout, "info");
    if (child.stderr) relay.attach(child.stderr, "warning");

    let resolveExited: () => void = () => {};
    t.exited = new Promise<void>((resolve) => (resolveExited = resolve));
    let ended = false;
    const end = (code: number | null, signal: string | null, spawnError?: string) => {
      if (ended) return;
      ended = true;
      this.onExit(t, generation, code, signal, spawnError);
      resolveExited();
    };
    child.once("exit", (code, signal) => end(code, signal));
    child.once("error", (err) => {
      if (pid === null) end(null, null, err.message);
      else this.log("warning", `app ${spec.name} backend (pid ${pid}): ${err.message}`);
    });
    if (pid !== null) this.record(t);
  }

  private readSandboxStreams(t: Tracked, generation: number, child: ChildProcess): void {
    const info = child.stdio[SANDBOX_INFO_FD];
    if (info && "on" in info)
      this.readSandboxInfo(
        t,
        generation,
        info as NodeJS.ReadableStream,
        child.stdio[SANDBOX_BLOCK_FD] as Writable | null,
      );
  }

  private announceStarted(
    t: Tracked,
    pid: number,
    confined: boolean,
    address: { port: number; slot: number | null },
    bounds: BoundsAvailability,
  ): void {
    const grant = t.spec.network ?? [];
    const network =
      grant === "all"
        ? "any public host"
        : grant.length > 0
          ? `egress to ${grant.length} host pattern(s)`
          : "no network";
    this.log(
      "info",
      `app ${t.spec.name} backend started (pid ${pid}, ${confined ? `slot ${address.slot}, confined, ${bounds.mechanism} bounds of ${describeLimits(this.opts.limits)}, ${network}` : `port ${address.port}, unsandboxed`})`,
    );
  }

  private record(t: Tracked): void {
    const stat = t.pid === null ? null : readProcStat(t.pid);
    if (!stat || t.pid === null || t.pgid === null) return;
    try {
      writeRunRecord(this.opts.home, {
        name: t.spec.name,
        pid: t.pid,
        pgid: t.pgid,
        ...(t.sandboxPgid !== null ? { sandboxPgid: t.sandboxPgid } : {}),
        startTime: stat.startTime,
        bridgePid: process.pid,
        bridgeStartTime: this.bridgeStartTime,
        startedAt: t.startedAt ?? new Date().toISOString(),
      });
    } catch (err) {
      // Not fatal: the record only serves reaping after a hard kill of this bridge.
      this.log("warning", `app ${t.spec.name}: could not write its run record: ${String(err)}`);
    }
  }

  /**
   * bwrap names its sandboxed child on the info descriptor; with cgroup bounds the child is
   * attached to the run's group and only then released from bwrap's block descriptor, so not
   * one of its processes starts outside the limits.
   */
  private readSandboxInfo(t: Tracked, generation: number, stream: NodeJS.ReadableStream, block: Writable | null): void {
    void readChildPid(stream, 10_000).then((childPid) => {
      if (generation !== t.generation || !t.running || childPid === null || childPid <= 1) return;
      if (t.group) {
        try {
          t.group.attach(childPid);
        } catch (cause) {
          this.log("error", `app ${t.spec.name} backend could not be placed under its limits: ${String(cause)}`);
          signalProcessGroup(t.pgid, "SIGKILL");
          return;
        }
        block?.end("go");
      }
      t.sandboxPgid = childPid;
      this.record(t);
    });
  }

  /** Checks the run's cgroup each second: a process limit reached is a bomb, so the backend is stopped. */
  private watchLimits(t: Tracked, generation: number): void {
    const tick = () => {
      if (generation !== t.generation || !t.running || !t.group) return;
      if (t.group.hits().includes("processes") && !t.limitsReached.includes("processes")) {
        t.limitsReached.push("processes");
        this.log(
          "error",
          `app ${t.spec.name} backend reached ${LIMIT_WORDS.processes} (${describeLimits(this.opts.limits)}); stopping it`,
        );
        this.onLimit(t.spec.name, "processes", this.opts.limits);
        signalProcessGroup(t.pgid, "SIGKILL"); // bwrap: its pid namespace, and every process in it, goes with it
        return;
      }
      this.later(t, 1_000, tick);
    };
    this.later(t, 500, tick);
  }

  /** A backend whose data/ already holds more than its share of the storage limit does not start. */
  private async requireStorageRoom(spec: BackendSpec): Promise<{ ok: true } | LaunchRefusal> {
    if (!spec.hasStorage) return { ok: true };
    const { dataBytes } = storageShares(this.opts.limits.storageBytes);
    const used = await folderBytes(spec.dataDir, dataBytes);
    return used > dataBytes ? spawnFailed(storageLimitReason(used, dataBytes)) : { ok: true };
  }

  /** Measures data/ each second: past its share of the storage limit, the backend is stopped (its whole sandbox) and the stop reported. */
  private watchStorage(t: Tracked, generation: number): void {
    const { dataBytes } = storageShares(this.opts.limits.storageBytes);
    t.storage?.stop();
    t.storage = watchStorage({
      dataDir: t.spec.dataDir,
      dataBytes,
      onExceeded: (used) => {
        if (generation !== t.generation || !t.running) return;
        t.limitsReached.push("storage");
        this.log(
          "error",
          `app ${t.spec.name} backend reached ${LIMIT_WORDS.storage}: ${storageLimitReason(used, dataBytes)}; stopping it`,
        );
        this.onLimit(t.spec.name, "storage", this.opts.limits, used);
        signalProcessGroup(t.sandboxPgid, "SIGKILL");
        signalProcessGroup(t.pgid, "SIGKILL");
      },
    });
  }

  private onExit(
    t: Tracked,
    generation: number,
    code: number | null,
    signal: string | null,
    spawnError?: string,
  ): void {
    if (generation !== t.generation) return;
    t.storage?.stop();
    t.storage = null;
    void t.relay?.finished(); // trailing partial line and the drop note, once the pipes close
    this.clearTimers(t);
    t.running = false;
    t.healthy = false;
    t.exit = { code, signal, at: new Date().toISOString() };
    removeRunRecord(this.opts.home, t.spec.name);
    const name = t.spec.name;
    if (t.group) {
      for (const hit of t.group.hits()) {
        if (t.limitsReached.includes(hit)) continue;
        t.limitsReached.push(hit);
        this.log("error", `app ${name} backend reached ${LIMIT_WORDS[hit]} (${describeLimits(this.opts.limits)})`);
        this.onLimit(name, hit, this.opts.limits);
      }
      t.group.remove();
      t.group = null;
    }
    if (t.stopping) {
      t.reason = "stopped";
      this.log("info", `app ${name} backend (pid ${t.pid}) stopped`);
      this.emit(t);
      return;
    }
    const reached = t.limitsReached.map((hit) => LIMIT_WORDS[hit]).join(" and ");
    const how = !existsSync(t.spec.appDir)
      ? `exited (${signal ? `killed by ${signal}` : `code ${code}`}): ${APP_FOLDER_MISSING}`
      : spawnError
        ? `could not be started: ${spawnError}`
        : reached
          ? `was stopped at ${reached} (${describeLimits(this.opts.limits)})`
          : signal
            ? `was killed by ${signal}`
            : `exited with code ${code}`;
    t.failedStarts = t.healthyThisRun ? 0 : t.failedStarts + 1;
    this.log("warning", `app ${name} backend (pid ${t.pid}) ${how}`);
    if (t.limitsReached.includes("storage")) {
      // Started again it would only fill data/ further: it stays down until the owner acts.
      t.gaveUp = true;
      t.reason = `stays down: ${how}; free space in its data/ or raise sandbox.limits.storage_mb, then restart it`;
      this.log("error", `app ${name} backend ${t.reason}`);
    } else if (t.failedStarts >= this.opts.maxFailedStarts) {
      t.gaveUp = true;
      t.reason = `stays down: ${t.failedStarts} starts in a row ended before it answered its health check (last: ${how})`;
      this.log("error", `app ${name} backend ${t.reason}`);
    } else if (this.held.has(name)) {
      t.reason = `${how}; held, so not restarted`;
    } else {
      t.reason = `${how}; restarting`;
      this.scheduleRestart(t);
    }
    this.emit(t);
  }

  private scheduleRestart(t: Tracked): void {
    const delay = Math.min(this.opts.watchdogMs, this.opts.restartBackoffMs * 2 ** Math.max(0, t.failedStarts - 1));
    t.restartTimer = setTimeout(() => {
      t.restartTimer = null;
      if (t.running || t.stopping || t.gaveUp || this.held.has(t.spec.name)) return;
      t.restarts += 1;
      void this.launch(t).then((launched) => {
        if (!launched.ok) {
          t.reason = `restart failed: ${launched.code}: ${launched.reason}`;
          this.log("error", `app ${t.spec.name} backend ${t.reason}`);
          this.onRestartRefused(t.spec.name, launched.code);
          this.emit(t);
        }
      });
    }, delay);
  }

  private startupPoll(t: Tracked, generation: number): void {
    const healthPath = t.spec.backend.healthCheck ?? "/health";
    if (!isAcceptableHealthPath(healthPath)) {
      if (!this.warnedHealthPaths.has(healthPath)) {
        this.warnedHealthPaths.add(healthPath);
        this.log(
          "warning",
          `app ${t.spec.name}: healthCheck ${JSON.stringify(healthPath)} is not an absolute path of [A-Za-z0-9/_.~-]; the backend is treated as unhealthy`,
        );
      }
      t.reason = "healthCheck path refused; treated as unhealthy";
      this.emit(t);
      return;
    }
    const deadline = Date.now() + this.opts.startTimeoutMs;
    const tick = async () => {
      if (generation !== t.generation || !t.running) return;
      const ok = await probeHealth(this.endpointOf(t), healthPath, this.opts.probeTimeoutMs);
      if (generation !== t.generation || !t.running) return;
      if (ok) {
        this.markHealthy(t);
        this.watch(t, generation, healthPath);
        return;
      }
      if (Date.now() >= deadline) {
        t.reason = `did not answer GET ${healthPath} with 2xx within ${Math.round(this.opts.startTimeoutMs / 1000)} s`;
        this.log("warning", `app ${t.spec.name} backend ${t.reason}`);
        this.emit(t);
        this.watch(t, generation, healthPath);
        return;
      }
      this.later(t, this.opts.startupPollMs, tick);
    };
    this.later(t, Math.min(this.opts.startupPollMs, 100), tick);
  }

  /** The standing watch: every healthIntervalMs; healthMisses misses in a row demote, one success promotes. */
  private watch(t: Tracked, generation: number, healthPath: string): void {
    let misses = 0;
    const tick = async () => {
      if (generation !== t.generation || !t.running) return;
      const ok = await probeHealth(this.endpointOf(t), healthPath, this.opts.probeTimeoutMs);
      if (generation !== t.generation || !t.running) return;
      if (ok) {
        misses = 0;
        if (!t.healthy) this.markHealthy(t);
        // The last lines the owner reads are reported again once they moved, at most once an interval.
        else if (this.linesMoved(t)) this.emit(t);
      } else {
        misses += 1;
        if (misses >= this.opts.healthMisses && t.healthy) {
          t.healthy = false;
          t.reason = `missed ${misses} health checks in a row`;
          this.log("warning", `app ${t.spec.name} backend ${t.reason}`);
          this.emit(t);
        }
      }
      this.later(t, this.opts.healthIntervalMs, tick);
    };
    this.later(t, this.opts.healthIntervalMs, tick);
  }

  private markHealthy(t: Tracked): void {
    t.healthy = true;
    t.healthyThisRun = true;
    t.failedStarts = 0;
    t.reason = undefined;
    this.emit(t);
  }

  private later(t: Tracked, ms: number, fn: () => void | Promise<void>): void {
    const timer = setTimeout(() => {
      t.timers.delete(timer);
      void fn();
    }, ms);
    t.timers.add(timer);
  }

  private clearTimers(t: Tracked): void {
    for (const timer of t.timers) clearTimeout(timer);
    t.timers.clear();
    if (t.restartTimer) clearTimeout(t.restartTimer);
    t.restartTimer = null;
  }

  private async exitedWithin(t: Tracked, ms: number): Promise<boolean> {
    if (!t.running) return true;
    return withTimeout(
      t.exited.then(() => true),
      ms,
      false,
    );
  }

  /** True when the backend printed since its status was last reported. */
  private linesMoved(t: Tracked): boolean {
    const lines = t.relay?.lastLines() ?? [];
    return (lines.at(-1) ?? "") !== t.reportedLastLine || lines.length !== t.reportedLineCount;
  }

  private emit(t: Tracked): void {
    void this.announce(t);
  }

  /** Reports the backend's status; resolves once the report is delivered (as far as onChange says). */
  private async announce(t: Tracked): Promise<void> {
    const status = this.status(t.spec.name);
    if (!status) return;
    t.reportedLastLine = status.lastLines.at(-1) ?? "";
    t.reportedLineCount = status.lastLines.length;
    try {
      await this.onChange(t.spec.name, status);
    } catch (err) {
      this.log("error", `onChange for app ${t.spec.name} threw: ${String(err)}`);
    }
  }
}
