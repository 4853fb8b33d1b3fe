// What the parts of one backend supervisor share: its options, checked and given their defaults
// once when it is constructed (a bad home or sandbox mode is refused there, never at a start),
// the backends it tracks and holds, and where it reports.
import os from "node:os";
import path from "node:path";
import { backendStartTimeoutMs } from "../../kernel/contracts/manifest-backend-ui.js";
import { DEFAULT_LIMITS, type LimitHit, type Limits } from "../sandbox/bounds.js";
import type { SandboxAvailability } from "../sandbox/bubblewrap.js";
import type { BackendSupervisorOptions, SupervisedBackendStatus, SupervisorLogLevel } from "./backend-supervisor.js";
import type { LaunchResult } from "./launch-steps.js";
import { readProcStat } from "./process-identity.js";
import type { Tracked } from "./tracked-backend.js";

/** The options with every default filled in; the callbacks are kept apart (Supervision). */
export type ResolvedOptions = Required<
  Omit<
    BackendSupervisorOptions,
    "onChange" | "log" | "workspace" | "gatewayPort" | "bounds" | "onLimit" | "onRestartRefused" | "egress"
  >
> &
  Pick<BackendSupervisorOptions, "workspace" | "gatewayPort" | "bounds" | "egress">;

export interface Supervision {
  readonly opts: ResolvedOptions;
  readonly tracked: Map<string, Tracked>;
  /** An update's new version per app, started beside the tracked one until it takes over (successor.ts). */
  readonly successors: Map<string, Tracked>;
  /** Backends the watchdog never restarts while a transition holds them. */
  readonly held: Set<string>;
  /** healthCheck paths already warned about, so a refused one is logged once. */
  readonly warnedHealthPaths: Set<string>;
  /** The last sandbox probe that succeeded (only a success is kept). */
  availability: SandboxAvailability | null;
  /** This bridge's start time, written into every run record (reaping tells a live bridge from a reused pid). */
  readonly bridgeStartTime: string;
  readonly onChange: (name: string, status: SupervisedBackendStatus) => unknown;
  readonly onLimit: (name: string, hit: LimitHit, limits: Limits, usedBytes?: number) => void;
  readonly onRestartRefused: (name: string, code: string) => void;
  readonly log: (level: SupervisorLogLevel, msg: string) => void;
  /** Starts a run of a tracked backend; the watchdog restarts through it, so it need not import the launcher. */
  readonly launch: (t: Tracked) => Promise<LaunchResult>;
}

/** Checks the options and fills in their defaults; throws TypeError on a relative home or an unknown sandbox mode. */
export function createSupervision(
  options: BackendSupervisorOptions,
  launch: (t: Tracked) => Promise<LaunchResult>,
): Supervision {
  if (!path.isAbsolute(options.home)) throw new TypeError("BackendSupervisor needs an absolute home");
  if (options.sandbox.mode !== "on" && options.sandbox.mode !== "off")
    throw new TypeError(`sandbox.mode must be "on" or "off"`);
  return {
    opts: {
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
      startTimeoutMs: options.startTimeoutMs ?? backendStartTimeoutMs(undefined),
      startupPollMs: options.startupPollMs ?? 250,
      probeTimeoutMs: options.probeTimeoutMs ?? 2_000,
      stopGraceMs: options.stopGraceMs ?? 5_000,
      stopAllBudgetMs: options.stopAllBudgetMs ?? 8_000,
      watchdogMs: options.watchdogMs ?? 30_000,
      restartBackoffMs: options.restartBackoffMs ?? 1_000,
      maxFailedStarts: options.maxFailedStarts ?? 3,
    },
    tracked: new Map(),
    successors: new Map(),
    held: new Set(),
    warnedHealthPaths: new Set(),
    availability: null,
    bridgeStartTime: readProcStat(process.pid)?.startTime ?? "",
    onChange: options.onChange ?? (() => {}),
    onLimit: options.onLimit ?? (() => {}),
    onRestartRefused: options.onRestartRefused ?? (() => {}),
    log: options.log ?? (() => {}),
    launch,
  };
}
