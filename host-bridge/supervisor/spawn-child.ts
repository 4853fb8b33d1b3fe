// The last, least reversible hardening step: starting the process.
import { spawn, type ChildProcess, type StdioOptions } from "node:child_process";
import type { Writable } from "node:stream";
import { closeSync, readdirSync, readFileSync } from "node:fs";
import { seccompProgram } from "../sandbox/seccomp-filter";

/** The descriptor bwrap writes {"child-pid": N} to, when sandboxed. */
export const SANDBOX_INFO_FD = 3;

/** The descriptor bwrap waits on before it runs the child (bounds by cgroup: attached first). */
export const SANDBOX_BLOCK_FD = 4;

/**
 * The descriptor bwrap reads the child's environment from (`--args`: `--clearenv`, then one
 * `--setenv NAME VALUE` per variable), so the environment is never on a command line, which
 * every local user can read in /proc/<pid>/cmdline. (5 is a backend's listening socket.)
 */
export const SANDBOX_ENV_FD = 6;

/** The descriptor bwrap reads the seccomp filter from (`--seccomp`), closed once read. */
export const SANDBOX_SECCOMP_FD = 7;

/**
 * The environment the host-side programs of a confined start run with (bwrap, and prlimit or
 * systemd-run in front of it): a fixed PATH and the user manager's address, nothing an app
 * declared. A loader variable among them (LD_PRELOAD, LD_AUDIT, GLIBC_TUNABLES, GCONV_PATH...)
 * would run code the app ships in those programs, on the host, before any namespace exists;
 * here no value of the child's environment reaches them at all, whatever its name.
 */
export function hostSideEnv(
  bridgeEnv: Readonly<Record<string, string | undefined>> = process.env,
): Record<string, string> {
  const env: Record<string, string> = { PATH: "/usr/bin:/bin" };
  // systemd-run --user finds the owner's user manager through these; they are the owner's own.
  for (const name of ["XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS"]) {
    const value = bridgeEnv[name];
    if (value !== undefined && value !== "") env[name] = value;
  }
  return env;
}

/** bwrap's `--args` text for `env`: NUL-separated `--clearenv`, then `--setenv NAME VALUE` for each variable. */
export function sandboxEnvArgs(env: Readonly<Record<string, string>>): Buffer {
  const words = ["--clearenv"];
  for (const [name, value] of Object.entries(env)) words.push("--setenv", name, value);
  return Buffer.from(`${words.join("\0")}\0`, "utf8");
}

/**
 * The child's descriptors: stdin closed, stdout/stderr piped to the log relay, and (sandboxed)
 * one pipe for bwrap's info. Threat: a descriptor the bridge holds (its listening socket, an
 * open .local_secret, the SQLite handle) leaking into third-party code. Node opens every
 * descriptor close-on-exec and passes a child only what this list names; what this process
 * itself inherited without close-on-exec is closed by spawnChild (closeLeakedDescriptors).
 * bwrap closes its info, block, environment and seccomp descriptors before it runs the child.
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
 * not reach it before the bridge's orderly stop. A confined start (`boxed`: the command is
 * wrapInSandbox's, which reads SANDBOX_ENV_FD) runs its host-side programs with hostSideEnv()
 * and hands `env` to bwrap on that descriptor, for the child alone; unconfined, the program
 * gets `env` itself.
 */
export function spawnChild(
  cmd: { file: string; args: string[]; cwd: string },
  opts: { env: Record<string, string>; stdio: StdioOptions; boxed: boolean; log?: (line: string) => void },
): ChildProcess {
  const leaked = closeLeakedDescriptors();
  if (leaked.length > 0)
    opts.log?.(
      `descriptors ${leaked.join(", ")} were inherited without close-on-exec from the program that started this one; closed, so that no app child receives them`,
    );
  const stdio = opts.boxed
    ? withDescriptor(withDescriptor(opts.stdio, SANDBOX_ENV_FD, "pipe"), SANDBOX_SECCOMP_FD, "pipe")
    : opts.stdio;
  const child = spawn(cmd.file, cmd.args, {
    cwd: cmd.cwd,
    env: opts.boxed ? hostSideEnv() : opts.env,
    stdio,
    detached: true,
    shell: false,
    windowsHide: true,
  });
  // bwrap's info, block and environment descriptors are pipes it closes when it likes; a reset
  // there is the end of that channel, not a bridge error (unhandled, it would crash the bridge).
  for (const extra of child.stdio.slice(3)) extra?.on("error", () => {});
  if (opts.boxed) {
    const envPipe = (child.stdio as ReadonlyArray<Writable | null | undefined>)[SANDBOX_ENV_FD];
    envPipe?.end(sandboxEnvArgs(opts.env));
    writeSeccompProgram(child);
  }
  return child;
}

/** Hands bwrap the filter on SANDBOX_SECCOMP_FD; bwrap reads it whole before it runs the child. */
export function writeSeccompProgram(child: ChildProcess): void {
  const pipe = (child.stdio as ReadonlyArray<Writable | null | undefined>)[SANDBOX_SECCOMP_FD];
  pipe?.on("error", () => {}); // a bwrap that failed early closed it: its exit says why
  pipe?.end(seccompProgram());
}

/** `stdio` with `fd` set to `what`, the descriptors between padded with "ignore". */
export function withDescriptor(stdio: StdioOptions, fd: number, what: "pipe" | "ignore" | number): StdioOptions {
  const list = [...(stdio as unknown[])];
  while (list.length < fd) list.push("ignore");
  list[fd] = what;
  return list as StdioOptions;
}

/**
 * Closes every descriptor above 2 this process holds without close-on-exec and answers their
 * numbers. Threat: the program that started the bridge or `mcp run` (an agent, a shell, an IDE)
 * left one open (the owner's SSH key on fd 30, say); every child spawned from here would
 * inherit it, and bwrap passes descriptors through into the box. Node opens all of its own
 * close-on-exec (its IPC channel included), and has no FD_CLOEXEC call to mark the others, so
 * what lacks the flag is someone else's and is closed.
 */
export function closeLeakedDescriptors(): number[] {
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
      if (flags !== undefined && (parseInt(flags, 8) & O_CLOEXEC) === 0) {
        closeSync(fd);
        found.push(fd);
      }
    } catch {
      // closed while we looked (the readdir's own descriptor)
    }
  }
  return found;
}
