// Runs app backends as supervised children (BACK-01..08, 13..15, 19, 21): each gets its own
// port, secret, allowlisted env and sandbox; health is a standing, reversible observation; a
// backend that exits on its own is restarted with backoff unless held or failing to start.
//
// This file is the supervisor's public face; its parts are named for what each holds:
// supervision.ts (options and shared state), launch.ts and launch-steps.ts (one run, step by
// step), backend-address.ts (ports and socket slots), run-tracking.ts (a spawned run followed),
// health-watch.ts, limit-watch.ts, watchdog.ts (exits and restarts) and stop-backend.ts.
import type { BackendStatus as ReportedBackendStatus } from "../../kernel/contracts/app-record";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { errorMessage } from "../../kernel/contracts/errors.js";
import type { HostPattern } from "../../kernel/rules/network-grant.js";
import { APP_NAME_PATTERN } from "../../kernel/rules/app-name";
import type { FolderGrant } from "../../kernel/contracts/folder-grants.js";
import { sandboxRefusal, type SandboxMode } from "../sandbox/bubblewrap.js";
import type { BoundsAvailability, LimitHit, Limits } from "../sandbox/bounds.js";
import type { EgressBrokers } from "../egress/brokers.js";
import type { BrokeredSecret } from "../egress/secret-placeholders.js";
import { launchRun } from "./launch.js";
import { probeSandbox } from "./launch-steps.js";
import { reapOrphans, type ReapReport } from "./reap-orphans.js";
import { emit, statusOf } from "./status-report.js";
import { stopBackend, stopEveryBackend } from "./stop-backend.js";
import { createSupervision, type Supervision } from "./supervision.js";
import { newTracked } from "./tracked-backend.js";
import { endpointOf } from "./backend-address.js";
import type { HealthEndpoint } from "./health-probe.js";
import { scheduleRestart } from "./watchdog.js";
import { dropSuccessor, promoteSuccessor, startSuccessor, successorStatus } from "./successor.js";

export type SupervisorLogLevel = "debug" | "info" | "warning" | "error";

export interface BackendSpec {
  /** The app name (kebab-case, as the manifest contract allows). */
  name: string;
  /** Absolute path of the installed app folder; the backend's working directory. */
  appDir: string;
  /** Absolute path of the app's data folder; writable only when hasStorage. */
  dataDir: string;
  hasStorage: boolean;
  /** startTimeoutSeconds: the manifest's own start timeout, else the supervisor's startTimeoutMs. */
  backend: { command: string; args?: readonly string[]; healthCheck?: string; startTimeoutSeconds?: number };
  /** The hosts its egress broker lets through ("all": any public host); none: no network at all. */
  network?: readonly HostPattern[] | "all";
  /** The secrets the owner assigned, opened for this start: environment name → value; masked in its log by value. */
  secrets?: Readonly<Record<string, string>>;
  /** The secrets its egress broker writes for it: the backend gets a new placeholder for each at every run, never the value. */
  brokered?: readonly BrokeredSecret[];
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

/** Supervises app backends; one instance per bridge. */
export class BackendSupervisor {
  private readonly sup: Supervision;

  constructor(options: BackendSupervisorOptions) {
    this.sup = createSupervision(options, (t) => launchRun(this.sup, t));
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
    const { sup } = this;
    const existing = sup.tracked.get(spec.name);
    if (existing && (existing.running || existing.restartTimer !== null)) {
      return {
        ok: false,
        code: "backend_already_running",
        reason: errorMessage("backend_already_running", { app: spec.name }),
      };
    }
    if (sup.opts.sandbox.mode === "on") {
      const refusal = sandboxRefusal("on", await probeSandbox(sup));
      if (refusal) {
        sup.log("error", `app ${spec.name} backend not started: ${refusal.reason}`);
        return { ok: false, ...refusal };
      }
    }
    // A start of an app this supervisor ran before keeps its count of revivals.
    const t = newTracked(spec, existing?.restarts ?? 0);
    sup.tracked.set(spec.name, t);
    const launched = await launchRun(sup, t);
    if (!launched.ok) {
      t.reason = launched.reason;
      emit(sup, t);
      return launched;
    }
    return { ok: true, name: spec.name, port: t.port, slot: t.slot, secret: t.secret, pid: t.pid };
  }

  /**
   * Restarts a backend on the owner's request: stopped (SIGTERM, then SIGKILL after the grace)
   * and started again with the same command and secret; it counts as a revival. `secrets`,
   * `folders` and `brokered`, when given, replace the ones it starts with.
   */
  async restart(
    name: string,
    secrets?: Readonly<Record<string, string>>,
    folders?: readonly FolderGrant[],
    brokered?: readonly BrokeredSecret[],
  ): Promise<{ ok: true } | Extract<StartResult, { ok: false }>> {
    const t = this.sup.tracked.get(name);
    if (!t) return { ok: false, code: "backend_spawn_failed", reason: "it was never started by this gateway" };
    await this.stop(name);
    if (secrets !== undefined) t.spec = { ...t.spec, secrets };
    if (folders !== undefined) t.spec = { ...t.spec, folders };
    if (brokered !== undefined) t.spec = { ...t.spec, brokered };
    t.restarts += 1;
    t.failedStarts = 0;
    const launched = await launchRun(this.sup, t);
    if (!launched.ok) {
      t.reason = `restart failed: ${launched.code}: ${launched.reason}`;
      emit(this.sup, t);
    }
    return launched;
  }

  /**
   * Starts an update's new version beside the app's running backend, on its own socket slot or
   * port; the gateway keeps routing to the running one until promote (successor.ts).
   */
  async startSuccessor(spec: BackendSpec): Promise<StartResult> {
    if (!APP_NAME_PATTERN.test(spec.name)) throw new TypeError(`not an app name: ${JSON.stringify(spec.name)}`);
    return startSuccessor(this.sup, spec);
  }

  /** The waiting new version's status and last missed health probe, or null. */
  successorStatus(name: string): ReturnType<typeof successorStatus> {
    return successorStatus(this.sup, name);
  }

  /** The waiting new version becomes the app's backend (reported to the gateway), then the old one stops. */
  promoteSuccessor(name: string): Promise<boolean> {
    return promoteSuccessor(this.sup, name, this.sup.opts.stopGraceMs);
  }

  /** Stops a waiting new version; the running backend is untouched. */
  dropSuccessor(name: string): Promise<void> {
    return dropSuccessor(this.sup, name, this.sup.opts.stopGraceMs);
  }

  /** A held backend is never restarted by the watchdog (unload, update, core-incompatible). */
  hold(name: string): void {
    this.sup.held.add(name);
    const t = this.sup.tracked.get(name);
    if (t?.restartTimer) {
      clearTimeout(t.restartTimer);
      t.restartTimer = null;
      t.reason = `${t.reason ?? "exited"}; held, so not restarted`;
      emit(this.sup, t);
    }
  }

  /** Lifts a hold; a backend that exited on its own while held is restarted. */
  release(name: string): void {
    this.sup.held.delete(name);
    const t = this.sup.tracked.get(name);
    if (t && !t.running && !t.stopping && !t.gaveUp && t.exit && t.restartTimer === null) scheduleRestart(this.sup, t);
  }

  isHeld(name: string): boolean {
    return this.sup.held.has(name);
  }

  /** The names of every backend this supervisor tracks. */
  names(): string[] {
    return [...this.sup.tracked.keys()];
  }

  /** The proxy secret of the backend's current start (kept across watchdog restarts), or null. */
  secretOf(name: string): string | null {
    const t = this.sup.tracked.get(name);
    return t && t.running ? t.secret : null;
  }

  /** Where the backend's current run answers (its slot's socket or its loopback port); null when it is not running. */
  endpoint(name: string): HealthEndpoint | null {
    const t = this.sup.tracked.get(name);
    return t && t.running && (t.slot !== null || t.port !== null) ? endpointOf(this.sup, t) : null;
  }

  status(name: string): SupervisedBackendStatus | null {
    return statusOf(this.sup, name);
  }

  /** What the current run's last missed health probe met instead of a 2xx, if it missed one. */
  lastHealthMiss(name: string): string | null {
    return this.sup.tracked.get(name)?.lastMiss ?? null;
  }

  /** Resolves true once the backend answers its health check, false on timeout or when it stops running. */
  async waitForHealth(name: string, timeoutMs: number = this.sup.opts.startTimeoutMs): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const t = this.sup.tracked.get(name);
      if (t?.healthy) return true;
      if (!t || Date.now() >= deadline) return false;
      if (!t.running && t.restartTimer === null) return false;
      await sleep(5); // a start waits on this: its granularity is part of every start's time
    }
  }

  /** SIGTERM to the backend's group, SIGKILL after the grace; resolves when it has exited. */
  stop(name: string, graceMs: number = this.sup.opts.stopGraceMs): Promise<StopResult> {
    return stopBackend(this.sup, name, graceMs);
  }

  /** Stops every backend this supervisor spawned, concurrently, within stopAllBudgetMs (BACK-21). */
  stopAll(): Promise<void> {
    return stopEveryBackend(this.sup);
  }

  /** At bridge start: kills recorded backends whose bridge died, never a live sibling's or a reused pid. */
  reapOrphans(): Promise<ReapReport> {
    return reapOrphans(this.sup.opts.home, {
      graceMs: this.sup.opts.stopGraceMs,
      log: (msg) => this.sup.log("warning", msg),
    });
  }
}
