// The last, least reversible hardening step: starting the process.
import { spawn, type ChildProcess, type StdioOptions } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** The descriptor bwrap writes {"child-pid": N} to, when sandboxed. */
export const SANDBOX_INFO_FD = 3;

/** The descriptor bwrap waits on before it runs the child (bounds by cgroup: attached first). */
export const SANDBOX_BLOCK_FD = 4;

/**
 * The child's descriptors: stdin closed, stdout/stderr piped to the log relay, and (sandboxed)
 * one pipe for bwrap's info. Threat: a descriptor the bridge holds (its listening socket, an
 * open .local_secret, the SQLite handle) leaking into third-party code. Node opens every
 * descriptor close-on-exec and passes a child only what this list names plus any descriptor
 * the bridge itself inherited without close-on-exec (see inheritableFds: Node has no
 * close_fds, and bwrap passes descriptors through); this function is where that list lives.
 * bwrap closes its info and block descriptors before it runs the child.
 */
export function closeInheritedFds(sandboxed: boolean, blocked = false): StdioOptions {
  if (!sandboxed) return ["ignore", "pipe", "pipe"];
  return blocked ? ["ignore", "pipe", "pipe", "pipe", "pipe"] : ["ignore", "pipe", "pipe", "pipe"];
}

/**
 * An MCP server's descriptors: the same list as closeInheritedFds, except that stdin is a pipe
 * too, since an MCP server's protocol is its stdin and stdout (relayed to and from the agent).
 */
export function mcpServerFds(sandboxed: boolean, blocked = false): StdioOptions {
  const base = closeInheritedFds(sandboxed, blocked) as string[];
  return ["pipe", ...base.slice(1)] as StdioOptions;
}

/**
 * Spawns `file` with `args` (never a shell string) in its own process group (detached), so a
 * stop signals the backend and everything it started, and a Ctrl-C at the owner's terminal does
 * not reach it before the bridge's orderly stop.
 */
export function spawnChild(
  cmd: { file: string; args: string[]; cwd: string },
  opts: { env: Record<string, string>; stdio: StdioOptions },
): ChildProcess {
  const child = spawn(cmd.file, cmd.args, {
    cwd: cmd.cwd,
    env: opts.env,
    stdio: opts.stdio,
    detached: true,
    shell: false,
    windowsHide: true,
  });
  // bwrap's info and block descriptors are sockets it closes when it likes; a reset there is
  // the end of that channel, not a bridge error (unhandled, it would crash the bridge).
  for (const extra of child.stdio.slice(3)) extra?.on("error", () => {});
  return child;
}

/**
 * Descriptors above 2 that this process holds without close-on-exec, which every child would
 * inherit: ones the bridge's own parent leaked to it (Node opens its own close-on-exec). They
 * are reported, not closed: Node cannot set FD_CLOEXEC, and closing one in use (an IPC channel
 * the parent handed down) would break the bridge.
 */
export function inheritableFds(): number[] {
  const O_CLOEXEC = 0o2000000;
  const found: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync("/proc/self/fdinfo");
  } catch {
    return found;
  }
  for (const entry of entries) {
    const fd = Number(entry);
    if (!Number.isInteger(fd) || fd <= 2) continue;
    try {
      const flags = /^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, "utf8"))?.[1];
      if (flags !== undefined && (parseInt(flags, 8) & O_CLOEXEC) === 0) found.push(fd);
    } catch {
      // closed while we looked (the readdir's own descriptor)
    }
  }
  return found;
}
