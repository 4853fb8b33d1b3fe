// The hardening steps of one backend run, each a named function the launcher calls in one
// visible order (launch.ts). A step that cannot hold refuses the start with a result, never an
// exception: with sandbox.mode "on" a backend runs confined or not at all.
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { errorMessage } from "../../kernel/contracts/errors.js";
import { GATEWAY_SOCKET_FOLDER } from "../../kernel/contracts/backend-slots.js";
import { sandboxAvailability, sandboxRefusal, wrapInSandbox, type SandboxAvailability } from "../sandbox/bubblewrap.js";
import {
  boundCommand,
  boundsAvailability,
  createChildGroup,
  describeLimits,
  type BoundsAvailability,
  type ChildGroup,
} from "../sandbox/bounds.js";
import { buildChildEnv, egressEnvironment } from "../sandbox/child-env.js";
import { placeSecrets } from "../egress/secret-placeholders.js";
import { handOverEntry } from "../sandbox/child-identity.js";
import { folderMounts, openGrantedFolders, type OpenedFolder } from "../sandbox/granted-folders.js";
import { storageShares } from "../sandbox/storage-limit.js";
import { writeAppSecret } from "./app-secret.js";
import type { BackendSpec, StartResult } from "./backend-supervisor.js";
import { SLOT_LISTEN_FD } from "./slot-listener.js";
import { SANDBOX_BLOCK_FD, SANDBOX_INFO_FD } from "./spawn-child.js";
import type { Supervision } from "./supervision.js";
import type { Tracked } from "./tracked-backend.js";

export type LaunchRefusal = Extract<StartResult, { ok: false }>;
export type LaunchResult = { ok: true } | LaunchRefusal;

/** The cause a row shows when a backend's folder is gone (removed by hand, or a half-done move). */
export const APP_FOLDER_MISSING = "app folder missing";

export function spawnFailed(reason: string, cause?: unknown): LaunchRefusal {
  return cause === undefined
    ? { ok: false, code: "backend_spawn_failed", reason }
    : { ok: false, code: "backend_spawn_failed", reason, cause };
}

/** The app folder must be there; with storage, data/ is created first, since bwrap refuses to bind a missing folder. */
export function prepareAppFolders(spec: BackendSpec): { ok: true } | LaunchRefusal {
  if (!existsSync(spec.appDir)) return spawnFailed(APP_FOLDER_MISSING);
  if (!spec.hasStorage) return { ok: true };
  try {
    mkdirSync(spec.dataDir, { recursive: true, mode: 0o700 });
    return { ok: true };
  } catch (cause) {
    return spawnFailed(`its data folder could not be created: ${String(cause)}`, cause);
  }
}

/** The app's .app_secret, which its backend reads to verify the gateway's signature. */
export function writeSecretFile(sup: Supervision, t: Tracked): { ok: true } | LaunchRefusal {
  const written = writeAppSecret(t.spec.appDir, t.secret);
  if (written.ok) return { ok: true };
  const reason = errorMessage("app_secret_unwritable", { app: t.spec.name, reason: written.reason });
  sup.log("error", reason);
  return { ok: false, code: "app_secret_unwritable", reason, cause: written.cause };
}

/** Probes bubblewrap; only a success is cached, so once the owner installs it the next start sees it. */
export async function probeSandbox(sup: Supervision): Promise<SandboxAvailability> {
  if (sup.availability?.ok) return sup.availability;
  const found = await sandboxAvailability(sup.opts.parentEnv.PATH);
  if (found.ok) sup.availability = found;
  return found;
}

/** With sandbox.mode "on", a backend runs confined or not at all; null availability means unconfined by the owner's choice. */
export function requireSandbox(
  sup: Supervision,
): { ok: true; availability: SandboxAvailability | null } | LaunchRefusal {
  if (sup.opts.sandbox.mode !== "on") return { ok: true, availability: null };
  const sandbox = sup.availability;
  if (sandbox?.ok) return { ok: true, availability: sandbox };
  return {
    ok: false,
    ...(sandboxRefusal("on", sandbox ?? { ok: false }) as { code: "sandbox_unavailable"; reason: string }),
  };
}

/** How backends are bounded: as the options say, else what this machine offers. */
export function boundsOf(sup: Supervision): BoundsAvailability {
  return sup.opts.bounds ?? boundsAvailability(sup.opts.parentEnv.PATH);
}

/** A confined backend bounded by cgroup gets its own group before it exists. */
export function createBoundsGroup(
  sup: Supervision,
  spec: BackendSpec,
  sandbox: SandboxAvailability | null,
  bounds: BoundsAvailability,
): { ok: true; group: ChildGroup | null } | LaunchRefusal {
  if (sandbox === null || bounds.mechanism !== "cgroup") return { ok: true, group: null };
  try {
    return { ok: true, group: createChildGroup(bounds, spec.name, sup.opts.limits) };
  } catch (cause) {
    return spawnFailed(`its limits (${describeLimits(sup.opts.limits)}) could not be set up: ${String(cause)}`, cause);
  }
}

/** The backend's environment: empty but for the allowlist, its own variables and its assigned secrets. */
export function childEnvironment(
  sup: Supervision,
  t: Tracked,
  port: number,
  sandboxed: boolean,
): Record<string, string> {
  const { spec } = t;
  return buildChildEnv(sup.opts.parentEnv, {
    kind: "backend",
    app: {
      name: spec.name,
      hasStorage: spec.hasStorage,
      dataDir: spec.dataDir,
      secret: t.secret,
      port,
      secrets: spec.secrets,
    },
    home: sup.opts.home,
    workspace: sup.opts.workspace,
    gatewayPort: sup.opts.gatewayPort,
    passthrough: sup.opts.passthrough,
    log: (msg) => sup.log("debug", msg),
    sandboxed,
  }).env;
}

/**
 * The owner's granted folders, checked and opened again for this run: one that is no longer
 * the folder the owner chose (swapped for a link, gone, opened up to nobody no more) refuses
 * the start with folder_grant_changed rather than run without it or with something else.
 */
export function openFolders(
  sup: Supervision,
  spec: BackendSpec,
  sandbox: SandboxAvailability | null,
): { ok: true; folders: OpenedFolder[] } | LaunchRefusal {
  const opened = openGrantedFolders(spec.folders ?? [], {
    home: sup.opts.home,
    ownerHome: sup.opts.ownerHome,
    identity: sandbox?.childIdentity ?? null,
  });
  if (opened.ok) return opened;
  sup.log("error", `app ${spec.name} backend not started: ${opened.reason}`);
  return { ok: false, code: opened.code, reason: opened.reason };
}

/**
 * A confined backend with a network grant reaches out only through its own broker; without one it
 * has no network. Its brokered secrets get new placeholders for this run, which its environment
 * holds instead of the values; with no broker (unconfined) they are not given at all.
 */
export async function startEgressBroker(
  sup: Supervision,
  { spec, runKey }: Pick<Tracked, "spec" | "runKey">,
  sandbox: SandboxAvailability | null,
  env: Record<string, string>,
): Promise<{ ok: true; socket: string | undefined } | LaunchRefusal> {
  const grant = spec.network ?? [];
  const brokered = spec.brokered ?? [];
  if (!sandbox || !sup.opts.egress || (grant !== "all" && grant.length === 0)) {
    if (brokered.length > 0)
      sup.log("warning", `app ${spec.name} backend: its placeholder secrets need its egress broker; none was given`);
    return { ok: true, socket: undefined };
  }
  try {
    const { placed, env: placeholders } = placeSecrets(brokered);
    const socket = await sup.opts.egress.start(runKey, spec.name, grant, placed);
    Object.assign(env, egressEnvironment());
    // Never over a name the bridge set, as for a secret's value (buildChildEnv).
    for (const [name, value] of Object.entries(placeholders)) if (!(name in env)) env[name] = value;
    return { ok: true, socket };
  } catch (cause) {
    return spawnFailed(`its egress broker could not start: ${String(cause)}`, cause);
  }
}

/** The backend's command wrapped in bubblewrap and its bounds; unconfined, the command as declared. */
export function confinedCommand(
  sup: Supervision,
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
  const { opts } = sup;
  const wrapped = wrapInSandbox(plain, {
    appDir: spec.appDir,
    writable: spec.hasStorage ? [spec.dataDir] : [],
    home: opts.home,
    ownerHome: opts.ownerHome,
    pathEnv: env.PATH,
    gateway: {
      listenFd: SLOT_LISTEN_FD,
      backendPort: run.port,
      ...(opts.gatewayPort !== undefined
        ? {
            callback: {
              socketDir: path.join(opts.runtimeDir, GATEWAY_SOCKET_FOLDER),
              port: opts.gatewayPort,
            },
          }
        : {}),
    },
    ...(run.egressSocket ? { egressSocket: run.egressSocket } : {}),
    folders: run.folders,
    bwrapPath: sandbox.path,
    tmpSizeBytes: storageShares(opts.limits.storageBytes).tmpBytes,
    userNamespace: sandbox.userNamespace,
    childIdentity: sandbox.childIdentity ?? null,
    infoFd: SANDBOX_INFO_FD,
    ...(run.blocked ? { blockFd: SANDBOX_BLOCK_FD } : {}),
  });
  // The secret a backend verifies the gateway's signature with is its own to read, whoever it runs as.
  handOverEntry(path.join(spec.appDir, ".app_secret"), sandbox.childIdentity ?? null);
  // The sandbox's own variables (a Node backend's in-process doors) win over the egress preload's NODE_OPTIONS, which they include.
  if ("env" in wrapped) Object.assign(env, wrapped.env);
  return { ...boundCommand(wrapped, opts.limits, bounds), cwd: spec.appDir };
}
