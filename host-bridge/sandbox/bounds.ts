// Bounds per app child: how many processes it may have and how much memory. Threat: a fork
// or memory bomb in one app takes the owner's whole machine down. Which mechanism applies
// depends on the machine, checked once at start and shown by `doctor`:
//   cgroup        a cgroup v1 pids + memory hierarchy this process may create groups in
//                 (root, as in CI and on servers): exact limits, and the bridge sees a hit;
//   systemd-scope `systemd-run --user --scope` (a stock desktop's user manager delegates
//                 cgroup v2 to its user): TasksMax and MemoryMax, enforced by the kernel;
//   rlimit        `prlimit`: RLIMIT_NPROC (counts the owner's processes too, so the cap is
//                 their current count plus the app's share) and RLIMIT_AS (address space,
//                 not resident memory). Root is exempt from RLIMIT_NPROC.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { findOnPath } from "./interpreter";
import { isPidAlive } from "../supervisor/process-identity";

export type BoundsMechanism = "cgroup" | "systemd-scope" | "rlimit" | "none";

export interface Limits {
  /** Processes and threads the child's tree may hold at once. */
  processes: number;
  /** Memory the child's tree may use, in bytes. */
  memoryBytes: number;
  /** What the app may store, in bytes: its data/ and its private /tmp together (storage-limit.ts). */
  storageBytes: number;
}

export const DEFAULT_LIMITS: Limits = {
  processes: 256,
  memoryBytes: 1024 * 1024 * 1024,
  storageBytes: 4096 * 1024 * 1024,
};

export interface BoundsAvailability {
  mechanism: BoundsMechanism;
  /** Whether the process limit really binds (RLIMIT_NPROC does not bind root). */
  processLimitBinds: boolean;
  /** One sentence for doctor and the start log. */
  description: string;
  /** cgroup: the folders groups are made in, one per controller. */
  cgroupRoots?: { pids: string; memory: string };
  prlimitPath?: string;
  systemdRunPath?: string;
}

/** Which bound reached its limit (storage: the bridge's own check of data/, storage-limit.ts). */
export type LimitHit = "processes" | "memory" | "storage";

/** A cgroup made for one child run. */
export interface ChildGroup {
  /** Moves a process into the group (its later children follow it). */
  attach(pid: number): void;
  /** The limits the group reports reached since it was made. */
  hits(): LimitHit[];
  /** SIGKILLs whatever is left in the group and removes it. */
  remove(): void;
}

function ownCgroupPath(controller: string): string | null {
  try {
    for (const line of readFileSync("/proc/self/cgroup", "utf8").split("\n")) {
      const [, controllers, rel] = line.split(":");
      if (controllers !== undefined && rel !== undefined && controllers.split(",").includes(controller))
        return path.join("/sys/fs/cgroup", controller, rel);
    }
  } catch {
    // no /proc
  }
  return null;
}

/** Proves this process can make a group under each v1 controller, by making and removing one. */
function cgroupRoots(): { pids: string; memory: string } | null {
  const pids = ownCgroupPath("pids");
  const memory = ownCgroupPath("memory");
  if (
    !pids ||
    !memory ||
    !existsSync(path.join(pids, "cgroup.procs")) ||
    !existsSync(path.join(memory, "cgroup.procs"))
  )
    return null;
  const roots = { pids: path.join(pids, "personalclaw"), memory: path.join(memory, "personalclaw") };
  try {
    for (const root of Object.values(roots)) {
      mkdirSync(root, { recursive: true });
      const probe = path.join(root, `probe-${process.pid}`);
      mkdirSync(probe);
      rmdirSync(probe);
    }
    return roots;
  } catch {
    return null;
  }
}

function systemdScopeWorks(systemdRun: string): boolean {
  try {
    execFileSync(
      systemdRun,
      ["--user", "--scope", "--quiet", "-p", "TasksMax=16", "-p", "MemoryMax=64M", "--", "/bin/true"],
      { stdio: "ignore", timeout: 5_000 },
    );
    return true;
  } catch {
    return false;
  }
}

let cached: BoundsAvailability | null = null;

/** Finds the mechanism that bounds app children on this machine (checked once per process). */
export function boundsAvailability(pathEnv: string | undefined, prefer?: BoundsMechanism): BoundsAvailability {
  if (cached && prefer === undefined) return cached;
  const isRoot = process.getuid?.() === 0;
  const roots = prefer === undefined || prefer === "cgroup" ? cgroupRoots() : null;
  let found: BoundsAvailability | null = null;
  if (roots) {
    found = {
      mechanism: "cgroup",
      processLimitBinds: true,
      cgroupRoots: roots,
      description: `a cgroup per app child under ${path.dirname(roots.pids)} limits its processes and memory`,
    };
  }
  const systemdRun = findOnPath("systemd-run", pathEnv);
  if (
    !found &&
    systemdRun &&
    !isRoot &&
    (prefer === undefined || prefer === "systemd-scope") &&
    systemdScopeWorks(systemdRun)
  ) {
    found = {
      mechanism: "systemd-scope",
      processLimitBinds: true,
      systemdRunPath: systemdRun,
      description: "systemd-run --user --scope gives each app child a cgroup (TasksMax, MemoryMax)",
    };
  }
  const prlimit = findOnPath("prlimit", pathEnv);
  if (!found && prlimit && (prefer === undefined || prefer === "rlimit")) {
    found = {
      mechanism: "rlimit",
      processLimitBinds: !isRoot,
      prlimitPath: prlimit,
      description: isRoot
        ? "prlimit bounds each app child's address space; its process count is not bounded (root is exempt from RLIMIT_NPROC and no cgroup can be made)"
        : "prlimit bounds each app child's address space and the owner's process count (no cgroup can be made)",
    };
  }
  found ??= {
    mechanism: "none",
    processLimitBinds: false,
    description: "no cgroup, systemd-run or prlimit: app children have no process or memory limit",
  };
  if (prefer === undefined) cached = found;
  return found;
}

function processCountOf(uid: number): number {
  let count = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const uidLine = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${entry}/status`, "utf8"));
      if (uidLine && Number(uidLine[1]) === uid)
        count += Number(/^Threads:\s+(\d+)/m.exec(readFileSync(`/proc/${entry}/status`, "utf8"))?.[1] ?? 1);
    } catch {
      // gone
    }
  }
  return count;
}

/**
 * The argv that runs `cmd` under the limits: a prefix for systemd-scope and rlimit; for
 * cgroup the command is unchanged and the caller attaches the child to the group before it
 * runs (bwrap's --block-fd holds it until then).
 */
export function boundCommand(
  cmd: { file: string; args: string[] },
  limits: Limits,
  bounds: BoundsAvailability,
): { file: string; args: string[] } {
  const inner = [cmd.file, ...cmd.args];
  if (bounds.mechanism === "systemd-scope") {
    const props = [
      "-p",
      `TasksMax=${limits.processes}`,
      "-p",
      `MemoryMax=${limits.memoryBytes}`,
      "-p",
      "MemorySwapMax=0",
    ];
    return {
      file: bounds.systemdRunPath!,
      args: ["--user", "--scope", "--quiet", "--collect", ...props, "--", ...inner],
    };
  }
  if (bounds.mechanism === "rlimit") {
    const uid = process.getuid?.() ?? 0;
    const nproc = uid === 0 ? limits.processes : processCountOf(uid) + limits.processes;
    // Address space, not memory in use: V8 and glibc reserve far more than they touch.
    const addressSpace = Math.max(limits.memoryBytes * 4, 4 * 1024 * 1024 * 1024);
    return { file: bounds.prlimitPath!, args: [`--nproc=${nproc}`, `--as=${addressSpace}`, "--", ...inner] };
  }
  return { file: cmd.file, args: cmd.args };
}

function writeLimit(file: string, value: string, required: boolean): void {
  try {
    writeFileSync(file, value);
  } catch (error) {
    if (required) throw error;
  }
}

function readCounter(file: string, pattern: RegExp): number {
  try {
    return Number(pattern.exec(readFileSync(file, "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** SIGKILLs what is left in a group folder and removes it; a folder already gone is fine. */
function removeGroupFolder(folder: string): void {
  for (let attempt = 0; attempt < 20; attempt += 1) {
    let left: number[];
    try {
      left = readFileSync(path.join(folder, "cgroup.procs"), "utf8").split("\n").filter(Boolean).map(Number);
    } catch {
      return; // already gone
    }
    for (const pid of left) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone
      }
    }
    try {
      rmdirSync(folder);
      return;
    } catch {
      // still busy: the kills take a moment
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 25);
    }
  }
}

/** A group's folder name: the app, the bridge that made it, and what makes it unique. */
const GROUP_NAME = /^[a-z0-9-]+-(\d+)-[a-z0-9]+-[a-z0-9]+$/;

/**
 * At bridge start: removes the groups a bridge that is gone left behind (a hard kill skips
 * its cleanup), with anything still in them. A live bridge's groups are left alone.
 */
export function removeStaleGroups(bounds: BoundsAvailability): string[] {
  const removed: string[] = [];
  if (bounds.mechanism !== "cgroup" || !bounds.cgroupRoots) return removed;
  for (const root of Object.values(bounds.cgroupRoots)) {
    let entries: string[];
    try {
      entries = readdirSync(root, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name);
    } catch {
      continue;
    }
    for (const entry of entries) {
      const creator = Number(GROUP_NAME.exec(entry)?.[1]);
      if (!Number.isInteger(creator) || creator === process.pid || isPidAlive(creator)) continue;
      removeGroupFolder(path.join(root, entry));
      removed.push(entry);
    }
  }
  return [...new Set(removed)];
}

/** Makes the cgroup of one child run; throws when it cannot (the caller refuses to start the child). */
export function createChildGroup(bounds: BoundsAvailability, name: string, limits: Limits): ChildGroup {
  const roots = bounds.cgroupRoots!;
  const unique = `${name}-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  const pids = path.join(roots.pids, unique);
  const memory = path.join(roots.memory, unique);
  mkdirSync(pids);
  mkdirSync(memory);
  writeLimit(path.join(pids, "pids.max"), String(limits.processes), true);
  writeLimit(path.join(memory, "memory.limit_in_bytes"), String(limits.memoryBytes), true);
  writeLimit(path.join(memory, "memory.memsw.limit_in_bytes"), String(limits.memoryBytes), false); // absent without swap accounting
  writeLimit(path.join(memory, "memory.swappiness"), "0", false);
  return {
    attach(pid) {
      writeFileSync(path.join(pids, "cgroup.procs"), String(pid));
      writeFileSync(path.join(memory, "cgroup.procs"), String(pid));
    },
    hits() {
      const found: LimitHit[] = [];
      if (readCounter(path.join(pids, "pids.events"), /^max\s+(\d+)/m) > 0) found.push("processes");
      // oom_kill, not failcnt: failcnt also counts page cache the kernel reclaimed at the limit.
      if (readCounter(path.join(memory, "memory.oom_control"), /^oom_kill\s+(\d+)/m) > 0) found.push("memory");
      return found;
    },
    remove() {
      for (const folder of [pids, memory]) removeGroupFolder(folder);
    },
  };
}

/** The limits in words, for logs and doctor. */
export function describeLimits(limits: Limits): string {
  const mib = (bytes: number) => Math.round(bytes / (1024 * 1024));
  return `${limits.processes} processes, ${mib(limits.memoryBytes)} MiB, ${mib(limits.storageBytes)} MiB of storage`;
}

export const LIMIT_WORDS: Record<LimitHit, string> = {
  processes: "its process limit",
  memory: "its memory limit",
  storage: "its storage limit",
};
