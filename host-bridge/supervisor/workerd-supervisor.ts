// Keeps workerd alive for as long as the bridge lives, and no longer. workerd runs under
// util-linux `setpriv --pdeathsig KILL`, so the kernel kills it when the bridge dies however it
// dies (SIGKILL included): a headless workerd serving the owner API while every CLI command
// says nothing runs is not possible. A workerd that exits while the bridge did not ask is
// started again with backoff (250 ms doubling to 10 s; reset after 60 s of running), each
// restart logged and reported.
import { existsSync } from "node:fs";
import { delimiter, join } from "node:path";
import { execa, type ResultPromise } from "execa";

/** Backoff before restart n (0-based). */
export function restartDelayMs(attempt: number): number {
  return Math.min(10_000, 250 * 2 ** Math.max(0, attempt));
}

/** A run this long counts as healthy: the next crash restarts after the shortest delay again. */
export const STABLE_RUN_MS = 60_000;

/** The setpriv binary that arms PR_SET_PDEATHSIG, or null when this machine has none. */
export function findSetpriv(path: string | undefined): string | null {
  for (const dir of [...(path ?? "").split(delimiter).filter(Boolean), "/usr/bin", "/bin"]) {
    const candidate = join(dir, "setpriv");
    if (existsSync(candidate)) return candidate;
  }
  return null;
}

/** The command that runs `binary args` so that it dies with this process. */
export function diesWithParent(
  setpriv: string | null,
  binary: string,
  args: string[],
): { file: string; args: string[] } {
  return setpriv === null
    ? { file: binary, args }
    : { file: setpriv, args: ["--pdeathsig", "KILL", "--", binary, ...args] };
}

export interface WorkerdSupervisorOptions {
  binary: string;
  args: string[];
  env: Record<string, string>;
  setpriv: string | null;
  log: (line: string) => void;
  /** Before each spawn, first and restarts: clear what a dead workerd left (its UNIX socket). */
  beforeSpawn?: () => void;
  /** Each spawn, first and restarts: wire its output, record its pid. */
  onSpawn: (child: ResultPromise) => void;
  /** After a restart: wait until it answers, then tell it what it lost. */
  onRestarted: (attempt: number, exit: { exitCode?: number; signal?: string }) => Promise<void>;
}

export class WorkerdSupervisor {
  private child: ResultPromise | null = null;
  private stopping = false;
  private attempt = 0;
  private timer: NodeJS.Timeout | null = null;
  restarts = 0;

  constructor(private readonly opts: WorkerdSupervisorOptions) {}

  /** Spawns workerd; answers the child. */
  start(): ResultPromise {
    const { file, args } = diesWithParent(this.opts.setpriv, this.opts.binary, this.opts.args);
    this.opts.beforeSpawn?.();
    const child = execa(file, args, {
      reject: false,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      env: this.opts.env,
      extendEnv: false,
      cleanup: true,
    });
    const spawnedAt = Date.now();
    this.child = child;
    this.opts.onSpawn(child);
    void child.then((result) => {
      if (this.stopping || this.child !== child) return;
      if (Date.now() - spawnedAt >= STABLE_RUN_MS) this.attempt = 0;
      const delay = restartDelayMs(this.attempt);
      const exit = { exitCode: result.exitCode, signal: result.signal ?? undefined };
      this.opts.log(
        `warning workerd exited unexpectedly (${result.signal ?? `exit ${result.exitCode}`}); restarting in ${delay} ms`,
      );
      this.timer = setTimeout(() => {
        this.timer = null;
        if (this.stopping) return;
        this.attempt += 1;
        this.restarts += 1;
        this.start();
        this.opts
          .onRestarted(this.restarts, exit)
          .catch((error) =>
            this.opts.log(
              `warning workerd restart ${this.restarts}: ${error instanceof Error ? error.message : String(error)}`,
            ),
          );
      }, delay);
    });
    return child;
  }

  current(): ResultPromise | null {
    return this.child;
  }

  /** Stops workerd for good: SIGTERM, then SIGKILL after `graceMs`. */
  async stop(graceMs = 3_000): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const killTimer = setTimeout(() => child.kill("SIGKILL"), graceMs);
    await child;
    clearTimeout(killTimer);
  }
}
