// Wraps an app child in bubblewrap: a confinement sandbox. The child starts on an empty root
// and sees only what the mount plan names (mount-plan.ts): system programs and libraries, a
// few files of /etc, its interpreter's prefix, its own app folder read-only, the folders it
// may write, a private /tmp, a minimal /dev and its own /proc. No home folder of anyone, no
// other project, no host socket in /run or /tmp. Every app child (backend, hook, installer)
// is wrapped here; there is no second way to build a sandbox.
import { spawn } from "node:child_process";
import path from "node:path";
import { errorMessage } from "../../kernel/contracts/errors.js";
import { findOnPath, interpreterMounts, isNodeProgram, resolveProgram } from "./interpreter";
import { packageRoot } from "../package-root";
import { EGRESS_PROXY_PORT, INSIDE_DIR, mountArgs, planMounts, SYSTEM_FOLDERS, type MountStep } from "./mount-plan";
import { SANDBOX_ENV_FD, SANDBOX_SECCOMP_FD, withDescriptor, writeSeccompProgram } from "../supervisor/spawn-child";
import {
  childIdentity,
  dropPrivilegeArgs,
  handOverEntry,
  handOverWritable,
  type ChildIdentity,
} from "./child-identity";
import { seccompProgram } from "./seccomp-filter";

export type SandboxMode = "on" | "off";

export interface SandboxAvailability {
  ok: boolean;
  /** Absolute path of the bwrap that was proven to run. */
  path?: string;
  /** Whether `--unshare-user --disable-userns` works here (with unprivileged user namespaces; never used as root). */
  userNamespace?: boolean;
  /** Root only: the unprivileged host user every child drops to (child-identity.ts); null: children run as the owner. */
  childIdentity?: ChildIdentity | null;
  reason?: string;
}

export interface SandboxedCommand {
  file: string;
  args: string[];
  /** The child's working directory; it must be visible in the sandbox (the app folder or /tmp). */
  cwd: string;
}

export interface WrapOptions {
  /** The app's own folder: visible read-only. */
  appDir: string;
  /** Folders inside appDir the child may write: data/ for an app with storage, an installer's output. */
  writable: readonly string[];
  /** PERSONALCLAW_HOME: never visible, except appDir inside it. */
  home: string;
  /** The owner's home folder: never shown whole, even when an interpreter lives inside it. */
  ownerHome: string;
  /** The child's PATH, used to find the program and the interpreter its `#!` line names. */
  pathEnv: string | undefined;
  /**
   * Every child has its own network namespace with only loopback. A backend gets the gateway
   * in through `gateway` (the listening socket of its slot, inherited as a descriptor), and
   * any child with a network grant gets out only through its egress broker's socket; either
   * runs the launcher (inside/launcher.mjs) as the program's parent.
   */
  gateway?: { listenFd: number; backendPort: number; callback?: { socketDir: string; port: number } };
  egressSocket?: string;
  /** From sandboxAvailability(); defaults to `bwrap` on the child's PATH and no user namespace flags. */
  bwrapPath?: string;
  userNamespace?: boolean;
  /** From sandboxAvailability(): set when the gateway is root; the child drops to this user. */
  childIdentity?: ChildIdentity | null;
  /** bwrap writes {"child-pid": N} here: the sandboxed process group the supervisor signals first. */
  infoFd?: number;
  /** bwrap holds the child until a byte arrives here (the bounds step attaches it to its cgroup first). */
  blockFd?: number;
  /** The private /tmp's size in bytes: its share of the app's storage limit (storage-limit.ts storageShares). */
  tmpSizeBytes?: number;
  /** The owner's granted folders, opened by the bridge and on these descriptors of the child (granted-folders.ts). */
  folders?: ReadonlyArray<{ need: string; fd: number; writable: boolean }>;
}

/** The namespace and process flags every sandbox uses, the probe included. */
function isolationArgs(userNamespace: boolean | undefined, identity: ChildIdentity | null | undefined): string[] {
  // No shared pids (cannot signal or read /proc of the bridge), ipc, uts, cgroup, and a network
  // namespace of its own (only loopback; host loopback ports and abstract UNIX sockets are not
  // in it). No capabilities inside, so the mounts cannot be undone. A new session: the child
  // cannot push keystrokes into the owner's terminal (TIOCSTI). Dies with the bridge. The
  // seccomp filter (seccomp-filter.ts) is loaded last, just before the child runs.
  const common = ["--new-session", "--die-with-parent", "--seccomp", String(SANDBOX_SECCOMP_FD)];
  if (identity)
    // Root: no user namespace (it would map the child to host root); setpriv, the first program,
    // uses the three capabilities kept here to become `identity` and drops them all.
    return [
      ...["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"],
      ...["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP"],
      ...common,
    ];
  return [
    "--unshare-all",
    ...(userNamespace ? ["--unshare-user", "--disable-userns"] : []),
    "--cap-drop",
    "ALL",
    ...common,
  ];
}

function runProbe(
  file: string,
  args: string[],
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<{ ok: boolean; reason: string }> {
  return new Promise((resolve) => {
    let stderr = "";
    // Aborted, the probe is killed and answers not ok (its 'error'), so nothing waits for it.
    const stdio = withDescriptor(["ignore", "ignore", "pipe"], SANDBOX_SECCOMP_FD, "pipe");
    const child = spawn(file, args, { stdio, env: {}, signal, killSignal: "SIGKILL" });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    writeSeccompProgram(child);
    child.stderr?.on("data", (chunk: Buffer) => {
      if (stderr.length < 2000) stderr += chunk.toString("utf8");
    });
    child.on("error", (err) => {
      clearTimeout(timer);
      resolve({ ok: false, reason: err.message });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve({ ok: true, reason: "" });
      else resolve({ ok: false, reason: stderr.trim() || `exited with ${signal ?? code}` });
    });
  });
}

/** The probe's plan: the system folders, /dev, /proc and /tmp of a real plan. */
function probeMounts(): string[] {
  const plan: MountStep[] = planMounts({
    appDir: "/tmp/personalclaw-probe",
    writable: [],
    readOnly: [],
    home: "/nonexistent/personalclaw-home",
  }).filter(
    (step) =>
      step.kind !== "ro-bind" || (SYSTEM_FOLDERS as readonly string[]).includes(step.target) || step.optional === true,
  );
  return mountArgs(plan);
}

/**
 * Finds bwrap on PATH and proves it can start a sandbox with the mounts and flags every app
 * child gets. The one probe: `doctor` and the supervisor both ask it.
 */
export async function sandboxAvailability(
  pathEnv: string | undefined,
  signal?: AbortSignal,
): Promise<SandboxAvailability> {
  const bwrap = findOnPath("bwrap", pathEnv);
  if (!bwrap) return { ok: false, reason: "bwrap is not on PATH" };
  if (seccompProgram() === null)
    return {
      ok: false,
      path: bwrap,
      reason: `no seccomp filter exists for this machine's architecture (${process.arch})`,
    };
  const identity = childIdentity();
  if (!identity.ok) return { ok: false, path: bwrap, reason: identity.reason };
  const truePath =
    (["/usr/bin/true", "/bin/true"] as const).find((p) => findOnPath(path.basename(p), path.dirname(p))) ?? "/bin/true";
  if (identity.identity) {
    // Root: the one way children run, with the drop to the unprivileged user proven too.
    const child = identity.identity;
    const asRoot = await runProbe(
      bwrap,
      [...probeMounts(), ...isolationArgs(false, child), "--", ...dropPrivilegeArgs(child), truePath],
      5000,
      signal,
    );
    if (asRoot.ok) return { ok: true, path: bwrap, userNamespace: false, childIdentity: child };
    return { ok: false, path: bwrap, reason: `bwrap cannot start a sandbox here: ${asRoot.reason}` };
  }
  const withUserns = await runProbe(
    bwrap,
    [...probeMounts(), ...isolationArgs(true, null), "--", truePath],
    5000,
    signal,
  );
  if (withUserns.ok) return { ok: true, path: bwrap, userNamespace: true, childIdentity: null };
  if (signal?.aborted) return { ok: false, path: bwrap, reason: "the probe was stopped" };
  const plain = await runProbe(bwrap, [...probeMounts(), ...isolationArgs(false, null), "--", truePath], 5000, signal);
  if (plain.ok) return { ok: true, path: bwrap, userNamespace: false, childIdentity: null };
  // Ubuntu 23.10+ restricts unprivileged user namespaces through AppArmor; bwrap then fails here.
  const restricted = /permission denied|operation not permitted|uid map|setting up/i.test(plain.reason)
    ? "; user or network namespaces are restricted on this machine (on Ubuntu: an AppArmor profile that allows bwrap, or sysctl kernel.apparmor_restrict_unprivileged_userns=0)"
    : "";
  return { ok: false, path: bwrap, reason: `bwrap cannot start a sandbox here: ${plain.reason}${restricted}` };
}

/** The sentence a refused start carries; names both fixes. */
export function sandboxUnavailableMessage(reason: string): string {
  return errorMessage("sandbox_unavailable", { reason });
}

/**
 * The refusal when the sandbox is required and missing, or null when the child may run
 * (sandboxed, or unsandboxed because the owner set sandbox.mode = "off").
 */
export function sandboxRefusal(
  mode: SandboxMode,
  availability: SandboxAvailability,
): { code: "sandbox_unavailable"; reason: string } | null {
  if (mode === "off" || availability.ok) return null;
  return {
    code: "sandbox_unavailable",
    reason: sandboxUnavailableMessage(availability.reason ?? "bwrap is unavailable"),
  };
}

/**
 * Returns the bwrap argv that runs `cmd` confined. The program is resolved by the bridge
 * (resolveProgram) so the child's PATH cannot swap it, and run by its absolute path.
 *
 * The environment is not on this command line (bwrap's argv is readable by every local user in
 * /proc/<pid>/cmdline, and the app secret would be in it), and not in bwrap's own environment
 * either (a loader variable there would run before the sandbox exists): bwrap reads
 * `--clearenv` and one `--setenv` per variable from SANDBOX_ENV_FD (`--args`), which
 * spawnChild writes for a `boxed` start.
 */
export function wrapInSandbox(
  cmd: SandboxedCommand,
  opts: WrapOptions,
): { file: string; args: string[]; env: Record<string, string> } {
  for (const p of [cmd.cwd, opts.appDir, opts.home, opts.ownerHome, ...opts.writable]) {
    if (!path.isAbsolute(p)) throw new TypeError(`wrapInSandbox needs absolute paths, got ${JSON.stringify(p)}`);
  }
  const appDir = path.resolve(opts.appDir);
  const program = resolveProgram(cmd.file, appDir, opts.pathEnv) ?? cmd.file;
  const keepHidden = [path.resolve(opts.ownerHome), path.resolve(opts.home), "/home", "/root"];
  const doors = opts.gateway !== undefined || opts.egressSocket !== undefined;
  // A Node backend opens its doors itself (node-listen.cjs): no second Node process in front of it.
  const inProcess = doors && opts.gateway !== undefined && isNodeProgram(program);
  const launched = doors && !inProcess;
  const readOnly = [program, ...(launched ? [process.execPath] : [])].flatMap((file) =>
    interpreterMounts({ file, cwd: appDir, pathEnv: opts.pathEnv, keepHidden }),
  );
  const plan = planMounts({
    appDir,
    writable: opts.writable,
    readOnly: [...new Set(readOnly)],
    home: opts.home,
    ...(opts.tmpSizeBytes !== undefined ? { tmpSizeBytes: opts.tmpSizeBytes } : {}),
    ...(opts.folders ? { folders: opts.folders } : {}),
    ...(doors
      ? {
          launcher: {
            libDir: LAUNCHER_DIR,
            egressSocket: opts.egressSocket,
            gatewaySocketDir: opts.gateway?.callback?.socketDir,
          },
        }
      : {}),
  });
  const identity = opts.childIdentity ?? null;
  // A root gateway's child writes as the unprivileged user: its writable folders become that user's.
  if (identity) {
    handOverWritable(opts.writable, identity);
    if (opts.egressSocket) handOverEntry(opts.egressSocket, identity);
  }
  const args = ["--args", String(SANDBOX_ENV_FD), ...mountArgs(plan), ...isolationArgs(opts.userNamespace, identity)];
  if (opts.infoFd !== undefined) args.push("--info-fd", String(opts.infoFd));
  if (opts.blockFd !== undefined) args.push("--block-fd", String(opts.blockFd));
  args.push("--chdir", path.resolve(cmd.cwd));
  args.push(
    "--",
    ...(identity ? dropPrivilegeArgs(identity) : []),
    ...(launched ? launcherArgs(opts) : []),
    program,
    ...cmd.args,
  );
  return { file: opts.bwrapPath ?? "bwrap", args, env: inProcess ? inProcessDoors(opts) : {} };
}

/** The variables node-listen.cjs reads to open a Node backend's doors in its own process. */
function inProcessDoors(opts: WrapOptions): Record<string, string> {
  const env: Record<string, string> = {
    PERSONALCLAW_LISTEN_FD: String(opts.gateway!.listenFd),
    NODE_OPTIONS: `--require ${INSIDE_DIR}/lib/node-listen.cjs${opts.egressSocket ? ` --require ${INSIDE_DIR}/lib/node-egress.cjs` : ""}`,
  };
  if (opts.gateway?.callback) {
    env.PERSONALCLAW_GATEWAY_SOCKET = `${INSIDE_DIR}/gateway/gateway.sock`;
    env.PERSONALCLAW_GATEWAY_RELAY_PORT = String(opts.gateway.callback.port);
  }
  if (opts.egressSocket) env.PERSONALCLAW_EGRESS_SOCKET = `${INSIDE_DIR}/egress.sock`;
  return env;
}

/** The folder of the launcher, in the package's source tree whether this runs from source or from a bundle. */
const LAUNCHER_DIR = path.join(packageRoot, "host-bridge", "sandbox", "inside");

/** node, the launcher and its flags, up to the `--` before the app's program. */
function launcherArgs(opts: WrapOptions): string[] {
  const args = [process.execPath, `${INSIDE_DIR}/lib/launcher.mjs`];
  if (opts.gateway)
    args.push("--listen-fd", String(opts.gateway.listenFd), "--backend-port", String(opts.gateway.backendPort));
  if (opts.gateway?.callback)
    args.push(
      "--gateway-socket",
      `${INSIDE_DIR}/gateway/gateway.sock`,
      "--gateway-port",
      String(opts.gateway.callback.port),
    );
  if (opts.egressSocket)
    args.push("--egress-socket", `${INSIDE_DIR}/egress.sock`, "--egress-port", String(EGRESS_PROXY_PORT));
  args.push("--");
  return args;
}
