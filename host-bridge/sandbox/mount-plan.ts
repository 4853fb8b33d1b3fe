// The filesystem a sandboxed app child sees, as one ordered list: deny by default. bwrap
// starts every child on an empty root; only what this plan names appears in it. Threat: a
// sandbox that shows the whole disk and hides a list of credential folders misses every
// store nobody listed (the GitHub CLI token, browser cookies, keyrings, shell history, other
// projects); a list of what a child needs cannot miss anything it does not name.
import { lstatSync, readlinkSync } from "node:fs";
import path from "node:path";
import { FOLDER_NEED_PATTERN, FOLDERS_INSIDE, folderInside } from "../../kernel/contracts/folder-grants.js";

export type MountStep =
  | { kind: "ro-bind"; source: string; target: string; why: string; optional?: boolean }
  | { kind: "bind"; source: string; target: string; why: string }
  | { kind: "bind-fd"; fd: number; target: string; why: string; writable: boolean }
  | { kind: "symlink"; linkTarget: string; target: string; why: string }
  | { kind: "dir"; target: string; why: string; mode?: number }
  | { kind: "tmpfs"; target: string; why: string; mode?: number; size?: number }
  | { kind: "dev"; target: string; why: string }
  | { kind: "proc"; target: string; why: string }
  | { kind: "remount-ro"; target: string; why: string };

/** Where the launcher, its preload and the egress socket appear inside the sandbox. */
export const INSIDE_DIR = "/run/personalclaw";

/** The port the egress relay listens on inside the namespace (HTTP(S)_PROXY=http://127.0.0.1:3128). */
export const EGRESS_PROXY_PORT = 3128;

/** The system's program and library folders: where /usr-merged systems keep links, the links are recreated. */
export const SYSTEM_FOLDERS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"] as const;

/**
 * The entries of /etc a program needs to run, resolve names and check certificates. Not the
 * rest of /etc: it holds host keys, shadow passwords (readable to a root owner's children),
 * mount tables and service credentials.
 */
export const ETC_ENTRIES = [
  "alternatives",
  "ca-certificates",
  "ca-certificates.conf",
  "gai.conf",
  "group",
  "host.conf",
  "hosts",
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "localtime",
  "mime.types",
  "nsswitch.conf",
  "os-release",
  "passwd",
  "protocols",
  "resolv.conf",
  "services",
  "ssl",
  "timezone",
] as const;

/**
 * What of /proc writes kernel state: sysctls, the magic SysRq key, interrupt routing, bus
 * devices (bwrap's own list). Bound read-only over the child's /proc.
 */
export const KERNEL_SETTINGS_IN_PROC = ["/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus"] as const;

export interface MountPlanOptions {
  /** The app's own folder: visible read-only. */
  appDir: string;
  /** Folders inside appDir the child may write (data/, or an installer's output folder). */
  writable: readonly string[];
  /** Extra read-only folders outside the system ones (an interpreter's real prefix). */
  readOnly: readonly string[];
  /** PERSONALCLAW_HOME: no mount may show it, or a folder that holds it, except appDir's own subtree. */
  home: string;
  /** The launcher's folder and the app's egress broker socket, shown at /run/personalclaw. */
  launcher?: { libDir: string; egressSocket?: string; gatewaySocketDir?: string };
  /** The system folders as this machine has them (tests pass their own). */
  system?: readonly string[];
  etc?: readonly string[];
  /** The private /tmp's size in bytes (its share of the app's storage limit, storage-limit.ts); unset: the kernel's default. */
  tmpSizeBytes?: number;
  /**
   * Folders the owner granted, each already opened and checked by the bridge
   * (granted-folders.ts) and passed to bwrap on descriptor `fd`: bound at /folders/<need>.
   */
  folders?: ReadonlyArray<{ need: string; fd: number; writable: boolean }>;
}

function kindOf(p: string): "dir" | "link" | "file" | "missing" {
  try {
    const st = lstatSync(p);
    return st.isSymbolicLink() ? "link" : st.isDirectory() ? "dir" : "file";
  } catch {
    return "missing";
  }
}

function isInside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

/**
 * Refuses a bind that would show the PersonalClaw home or a folder holding it (an interpreter
 * installed at the top of the owner's home, say): the home holds .local_secret and every
 * other app. Configuration, so a TypeError: the caller built a wrong plan.
 */
function assertKeepsHomeHidden(source: string, home: string, appDir: string): void {
  if (isInside(home, source) || (isInside(source, home) && !isInside(source, appDir))) {
    throw new TypeError(`the sandbox would show ${source}, which holds or lies in the PersonalClaw home`);
  }
}

/** The ordered mount plan; later steps cover earlier ones. */
export function planMounts(opts: MountPlanOptions): MountStep[] {
  for (const p of [opts.appDir, opts.home, ...opts.writable, ...opts.readOnly]) {
    if (!path.isAbsolute(p)) throw new TypeError(`the mount plan needs absolute paths, got ${JSON.stringify(p)}`);
  }
  const appDir = path.resolve(opts.appDir);
  const home = path.resolve(opts.home);
  return withSearchableParents([
    ...systemFolderMounts(opts.system ?? SYSTEM_FOLDERS),
    ...etcMounts(opts.etc ?? ETC_ENTRIES),
    ...kernelInterfaceMounts(opts.tmpSizeBytes),
    privateScratchMount(opts.tmpSizeBytes),
    ...interpreterPrefixMounts(opts.readOnly, home, appDir),
    ...appFolderMounts(appDir, opts.writable),
    ...grantedFolderMounts(opts.folders ?? []),
    ...launcherMounts(opts.launcher),
    // 8. Last: the root itself read-only, so the child cannot create files beside the mounts.
    { kind: "remount-ro", target: "/", why: "nothing writable but what step 6 bound" },
  ]);
}

/** 1. Programs and libraries, read-only. On a merged-/usr system /bin is a link to usr/bin. */
function systemFolderMounts(system: readonly string[]): MountStep[] {
  const steps: MountStep[] = [];
  for (const folder of system) {
    const kind = kindOf(folder);
    if (kind === "link")
      steps.push({ kind: "symlink", linkTarget: readlinkSync(folder), target: folder, why: "merged /usr link" });
    else if (kind === "dir")
      steps.push({ kind: "ro-bind", source: folder, target: folder, why: "system programs and libraries" });
  }
  return steps;
}

/** 2. The few files of /etc a program needs; a link (resolv.conf into /run) is bound as its target's content. */
function etcMounts(etc: readonly string[]): MountStep[] {
  const steps: MountStep[] = [{ kind: "dir", target: "/etc", why: "an /etc with only what programs need" }];
  for (const entry of etc) {
    const source = path.join("/etc", entry);
    steps.push({
      kind: "ro-bind",
      source,
      target: source,
      why: "name resolution, users, certificates, loader",
      optional: true,
    });
  }
  return steps;
}

/**
 * 3. Kernel interfaces: a minimal /dev (null, zero, random, tty, shm) and the child's own /proc.
 *    The kernel's writable settings in /proc are covered read-only for every child, whoever runs
 *    the gateway: bwrap covers them only when its own write test passes, which it does not for
 *    root, and a write to /proc/sys/kernel/core_pattern is a way to run code as host root.
 */
function kernelInterfaceMounts(tmpSizeBytes: number | undefined): MountStep[] {
  const steps: MountStep[] = [{ kind: "dev", target: "/dev", why: "minimal device nodes" }];
  // Bounded like /tmp: its pages are memory, but without a size it is one more place to fill.
  steps.push({
    kind: "tmpfs",
    target: "/dev/shm",
    why: "shared memory any user of the box may use",
    mode: 0o1777,
    ...(tmpSizeBytes !== undefined ? { size: tmpSizeBytes } : {}),
  });
  steps.push({ kind: "proc", target: "/proc", why: "the child's own pid namespace" });
  for (const entry of KERNEL_SETTINGS_IN_PROC)
    steps.push({
      kind: "ro-bind",
      source: entry,
      target: entry,
      why: "the kernel's settings, read-only",
      optional: true,
    });
  return steps;
}

/**
 * 4. Private scratch: nothing of the host's /tmp (sockets, other programs' files) is visible.
 *    Bounded: it counts towards the app's storage limit, and the kernel refuses a write past it.
 */
function privateScratchMount(tmpSizeBytes: number | undefined): MountStep {
  return {
    kind: "tmpfs",
    target: "/tmp",
    why: "private scratch, also HOME and TMPDIR",
    mode: 0o1777,
    ...(tmpSizeBytes !== undefined ? { size: tmpSizeBytes } : {}),
  };
}

/** 5. The interpreter's real prefix when it is not a system one (pyenv, nvm, a venv's base). */
function interpreterPrefixMounts(readOnly: readonly string[], home: string, appDir: string): MountStep[] {
  return readOnly.map((folder) => {
    const source = path.resolve(folder);
    assertKeepsHomeHidden(source, home, appDir);
    return { kind: "ro-bind", source, target: source, why: "the interpreter's own prefix" };
  });
}

/** 6. The app's own folder read-only, then the folders it may write. */
function appFolderMounts(appDir: string, writable: readonly string[]): MountStep[] {
  const steps: MountStep[] = [{ kind: "ro-bind", source: appDir, target: appDir, why: "the app's installed copy" }];
  for (const folder of writable) {
    const source = path.resolve(folder);
    if (!isInside(source, appDir) || source === appDir)
      throw new TypeError(`a writable folder must lie inside the app folder: ${source}`);
    steps.push({ kind: "bind", source, target: source, why: "the app's own writable folder" });
  }
  return steps;
}

/**
 * 6b. The owner's granted folders, by descriptor: never the host path (which could have become a
 *     link since the bridge checked it), never at the host path (an app learns nothing of where
 *     the owner keeps it), read-only unless granted read-write.
 */
function grantedFolderMounts(folders: NonNullable<MountPlanOptions["folders"]>): MountStep[] {
  if (folders.length === 0) return [];
  const steps: MountStep[] = [{ kind: "dir", target: FOLDERS_INSIDE, why: "the owner's granted folders", mode: 0o755 }];
  for (const folder of folders) {
    if (!FOLDER_NEED_PATTERN.test(folder.need) || !Number.isInteger(folder.fd) || folder.fd < 3)
      throw new TypeError(`not a granted folder: ${JSON.stringify(folder)}`);
    steps.push({
      kind: "bind-fd",
      fd: folder.fd,
      target: folderInside(folder.need),
      why: folder.writable ? "a folder the owner granted read-write" : "a folder the owner granted read-only",
      writable: folder.writable,
    });
  }
  return steps;
}

/**
 * 7. The launcher (the namespace's only way in and out) and the app's own broker socket:
 *    bound as single entries, so the app can neither replace them nor see another app's.
 */
function launcherMounts(launcher: MountPlanOptions["launcher"]): MountStep[] {
  if (!launcher) return [];
  const steps: MountStep[] = [{ kind: "dir", target: INSIDE_DIR, why: "the launcher's folder" }];
  steps.push({
    kind: "ro-bind",
    source: path.resolve(launcher.libDir),
    target: `${INSIDE_DIR}/lib`,
    why: "the launcher and the Node egress preload",
  });
  if (launcher.gatewaySocketDir)
    steps.push({
      kind: "ro-bind",
      source: path.resolve(launcher.gatewaySocketDir),
      target: `${INSIDE_DIR}/gateway`,
      why: "the gateway's socket, for calls back to the gateway",
    });
  if (launcher.egressSocket)
    steps.push({
      kind: "ro-bind",
      source: path.resolve(launcher.egressSocket),
      target: `${INSIDE_DIR}/egress.sock`,
      why: "the app's egress broker",
    });
  return steps;
}

/**
 * Each folder above a bound path that no earlier step made is made first, empty and 0755.
 * bwrap would make it owner-only (0700), and a root gateway's child, which is not that owner,
 * could not reach its own app folder (under the 0700 home) or an interpreter under /root. Only
 * the names on the way are shown: each such folder holds nothing but the next one.
 */
function withSearchableParents(steps: readonly MountStep[]): MountStep[] {
  // What a path may be found in: a step's own target, or anything under a bound folder (which
  // shows the source's own folders, and cannot be written to).
  const made = new Set<string>();
  const bound: string[] = [];
  const exists = (folder: string) => made.has(folder) || bound.some((target) => isInside(folder, target));
  const out: MountStep[] = [];
  for (const step of steps) {
    if (step.kind === "bind" || step.kind === "ro-bind") {
      const parents: string[] = [];
      for (let up = path.dirname(step.target); up !== "/" && !exists(up); up = path.dirname(up)) parents.unshift(up);
      for (const parent of parents) {
        out.push({ kind: "dir", target: parent, why: "a searchable folder on the way to a bound path", mode: 0o755 });
        made.add(parent);
      }
      bound.push(step.target);
    }
    if (step.kind !== "remount-ro") made.add(step.target);
    out.push(step);
  }
  return out;
}

/** The bwrap arguments of a plan, in its order. */
export function mountArgs(plan: readonly MountStep[]): string[] {
  const args: string[] = [];
  for (const step of plan) {
    switch (step.kind) {
      case "ro-bind":
        args.push(step.optional ? "--ro-bind-try" : "--ro-bind", step.source, step.target);
        break;
      case "bind":
        args.push("--bind", step.source, step.target);
        break;
      case "bind-fd":
        args.push(step.writable ? "--bind-fd" : "--ro-bind-fd", String(step.fd), step.target);
        break;
      case "symlink":
        args.push("--symlink", step.linkTarget, step.target);
        break;
      case "dir":
        if (step.mode !== undefined) args.push("--perms", step.mode.toString(8).padStart(4, "0"));
        args.push("--dir", step.target);
        break;
      case "tmpfs":
        if (step.mode !== undefined) args.push("--perms", step.mode.toString(8).padStart(4, "0"));
        if (step.size !== undefined) args.push("--size", String(step.size));
        args.push("--tmpfs", step.target);
        break;
      case "dev":
        args.push("--dev", step.target);
        break;
      case "proc":
        args.push("--proc", step.target);
        break;
      case "remount-ro":
        args.push("--remount-ro", step.target);
        break;
    }
  }
  return args;
}
