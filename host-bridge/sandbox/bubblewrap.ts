// Wraps a child in bubblewrap: a credential-hiding sandbox, not a jail (seed "What the sandbox
// does and does not do"). The system is visible read-only; the PersonalClaw home, the owner's
// credential folders and every other app's folder are not; only the app's own data/ is writable.
import { spawn } from "node:child_process";
import { accessSync, constants, existsSync, statSync } from "node:fs";
import path from "node:path";
import { ERROR_CODES } from "../../workers/contracts/errors.js";

export type SandboxMode = "on" | "off";
export type SandboxLevel = "strict" | "standard";

export interface SandboxAvailability {
  ok: boolean;
  /** Absolute path of the bwrap that was proven to run. */
  path?: string;
  /** Whether `--unshare-user --disable-userns` works here (it does as root and with unprivileged user namespaces). */
  userNamespace?: boolean;
  reason?: string;
}

export interface SandboxedCommand {
  file: string;
  args: string[];
  cwd: string;
}

export interface WrapOptions {
  /** The app's own folder: visible read-only, the child's working directory. */
  appDir: string;
  /** The app's data folder; bound writable only when writableData. */
  dataDir?: string;
  writableData: boolean;
  /** PERSONALCLAW_HOME: hidden as a whole. */
  home: string;
  /** The owner's home folder (os.homedir()), where credential folders are hidden. */
  ownerHome: string;
  level: SandboxLevel;
  /** true keeps the host network (a backend must: with its own namespace its loopback is unreachable from the gateway). */
  network: boolean;
  /** A private scratch folder besides /tmp, e.g. the launch TMPDIR when it is elsewhere. */
  tmpDir?: string;
  /** From sandboxAvailability(); defaults to `bwrap` on the child's PATH and no user namespace flags. */
  bwrapPath?: string;
  userNamespace?: boolean;
  /** bwrap writes {"child-pid": N} here: the sandboxed process group the supervisor signals first. */
  infoFd?: number;
}

/** Folders and files hidden at level standard (SBX-08). */
const STANDARD_HIDDEN = [".gnupg", ".gpg", ".config/gcloud", ".azure", ".docker"];
/** Added at level strict. */
const STRICT_HIDDEN = [".aws", ".kube", ".ssh", ".npmrc", ".pypirc", ".netrc", ".git-credentials"];

/** The credential paths hidden at a level, relative to the owner's home. */
export function hiddenCredentialPaths(level: SandboxLevel): string[] {
  return level === "strict" ? [...STANDARD_HIDDEN, ...STRICT_HIDDEN] : [...STANDARD_HIDDEN];
}

function findOnPath(name: string, pathEnv: string | undefined): string | undefined {
  for (const dir of (pathEnv ?? "").split(path.delimiter)) {
    if (!dir || !path.isAbsolute(dir)) continue; // a relative PATH entry resolves against whatever folder we are in
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

function runProbe(file: string, args: string[], timeoutMs: number): Promise<{ ok: boolean; reason: string }> {
  return new Promise((resolve) => {
    let stderr = "";
    const child = spawn(file, args, { stdio: ["ignore", "ignore", "pipe"], env: {} });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.stderr.on("data", (chunk: Buffer) => {
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

const PROBE_FLAGS = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-all", "--share-net", "--new-session", "--die-with-parent", "--cap-drop", "ALL"];

/** Finds bwrap on PATH and proves it can start a sandbox with the flags wrapInSandbox uses. */
export async function sandboxAvailability(pathEnv: string | undefined): Promise<SandboxAvailability> {
  const bwrap = findOnPath("bwrap", pathEnv);
  if (!bwrap) return { ok: false, reason: "bwrap is not on PATH" };
  const truePath = findOnPath("true", pathEnv) ?? "/bin/true";
  const withUserns = await runProbe(bwrap, [...PROBE_FLAGS, "--unshare-user", "--disable-userns", truePath], 5000);
  if (withUserns.ok) return { ok: true, path: bwrap, userNamespace: true };
  const plain = await runProbe(bwrap, [...PROBE_FLAGS, truePath], 5000);
  if (plain.ok) return { ok: true, path: bwrap, userNamespace: false };
  return { ok: false, path: bwrap, reason: `bwrap cannot start a sandbox here: ${plain.reason}` };
}

/** The sentence a refused start carries; names both fixes. */
export function sandboxUnavailableMessage(reason: string): string {
  return ERROR_CODES.sandbox_unavailable.message.replace("{reason}", reason);
}

/**
 * The refusal when the sandbox is required and missing, or null when the child may run
 * (sandboxed, or unsandboxed because the owner set sandbox.mode = "off").
 */
export function sandboxRefusal(mode: SandboxMode, availability: SandboxAvailability): { code: "sandbox_unavailable"; reason: string } | null {
  if (mode === "off" || availability.ok) return null;
  return { code: "sandbox_unavailable", reason: sandboxUnavailableMessage(availability.reason ?? "bwrap is unavailable") };
}

function exists(p: string): boolean {
  try {
    return existsSync(p);
  } catch {
    return false;
  }
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Returns the bwrap argv that runs `cmd` confined. Mount order matters: later mounts cover
 * earlier ones, so every hiding tmpfs comes before the app's own folders are bound back in (the
 * PersonalClaw home may live inside the owner's home, and tests put both under /tmp).
 *
 * The environment is NOT passed with --setenv: bwrap's argv is readable by every local user in
 * /proc/<pid>/cmdline, and the app secret would be in it. The caller hands the built env to
 * spawn, and bwrap passes its own environment to the child unchanged.
 */
export function wrapInSandbox(cmd: SandboxedCommand, opts: WrapOptions): { file: string; args: string[] } {
  for (const p of [cmd.cwd, opts.appDir, opts.home, opts.ownerHome, ...(opts.dataDir ? [opts.dataDir] : []), ...(opts.tmpDir ? [opts.tmpDir] : [])]) {
    if (!path.isAbsolute(p)) throw new TypeError(`wrapInSandbox needs absolute paths, got ${JSON.stringify(p)}`);
  }
  const appDir = path.resolve(opts.appDir);
  const home = path.resolve(opts.home);
  const ownerHome = path.resolve(opts.ownerHome);
  const args: string[] = [];

  // 1. The system, read-only: a child cannot change anything outside what is bound writable below.
  args.push("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc");

  // 2. Private scratch: another process's files in /tmp (an ssh-agent socket, a tool's token cache) are not visible.
  args.push("--tmpfs", "/tmp");
  if (opts.tmpDir && path.resolve(opts.tmpDir) !== "/tmp") args.push("--tmpfs", path.resolve(opts.tmpDir));

  // 3. Per-user runtime sockets (gpg-agent, ssh-agent, the session bus that opens the keyring) hidden.
  if (isDirectory("/run/user")) args.push("--tmpfs", "/run/user");

  // 4. The owner's credential folders and files: only the ones that exist, so no empty mount points appear.
  for (const rel of hiddenCredentialPaths(opts.level)) {
    const target = path.join(ownerHome, rel);
    if (!exists(target)) continue;
    if (isDirectory(target)) args.push("--tmpfs", target);
    // A file reads as empty (npm, pip and curl then carry on without the login). --ro-bind
    // would mount /dev/null nodev, and every read would fail EACCES instead; writes to
    // /dev/null are discarded, so --dev-bind changes nothing on disk.
    else args.push("--dev-bind", "/dev/null", target);
  }

  // 5. The whole PersonalClaw home: .local_secret, state/, other apps and their .app_secret files.
  args.push("--tmpfs", home);

  // 6. Re-bind only this app's folder (read-only) and, when it has storage, its data/ (writable).
  args.push("--ro-bind", appDir, appDir);
  if (opts.dataDir && opts.writableData) {
    const dataDir = path.resolve(opts.dataDir);
    args.push("--bind", dataDir, dataDir);
  }

  // 7. Namespaces: no shared pids (cannot signal or read /proc of the bridge), ipc, uts; the
  //    network only when asked. No capabilities inside, so the mounts above cannot be undone.
  args.push("--unshare-all");
  if (opts.network) args.push("--share-net");
  if (opts.userNamespace) args.push("--unshare-user", "--disable-userns");
  args.push("--cap-drop", "ALL");

  // 8. A new session: the child cannot push keystrokes into the owner's terminal (TIOCSTI).
  //    Dies with the bridge so a hard kill leaves no sandboxed orphan.
  args.push("--new-session", "--die-with-parent");
  if (opts.infoFd !== undefined) args.push("--info-fd", String(opts.infoFd));

  args.push("--chdir", path.resolve(cmd.cwd));
  args.push("--", cmd.file, ...cmd.args);
  return { file: opts.bwrapPath ?? "bwrap", args };
}
