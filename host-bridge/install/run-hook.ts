// Runs an app's install or uninstall hook: in the app's sandbox at the strict level, with
// networking off, from the allowlisted environment, killed at its time cap. A hook is a
// command and arguments, never a shell string.
import { execa } from "execa";
import { buildChildEnv } from "../sandbox/child-env";
import { wrapInSandbox, type SandboxAvailability, type SandboxMode } from "../sandbox/bubblewrap";

export interface HookContext {
  home: string;
  ownerHome: string;
  sandboxMode: SandboxMode;
  sandbox: SandboxAvailability;
  parentEnv: Readonly<Record<string, string | undefined>>;
  passthrough: readonly string[];
  log: (line: string) => void;
}

export type HookResult =
  | { ok: true; exitCode: 0 }
  | { ok: false; exitCode: number | null; signal: string | null; timedOut: boolean; reason: string };

/** Runs `hook` for the app in `appDir`; expected failures come back as results. */
export async function runHook(
  hook: { command: string; args?: string[] },
  app: { name: string; appDir: string; dataDir: string; hasStorage: boolean },
  ctx: HookContext,
  timeoutSeconds: number,
  extraEnv: Record<string, string> = {},
): Promise<HookResult> {
  const { env: allowlisted } = buildChildEnv(ctx.parentEnv, {
    kind: "hook",
    app: { name: app.name, hasStorage: app.hasStorage, dataDir: app.dataDir },
    home: ctx.home,
    passthrough: ctx.passthrough,
    log: ctx.log,
  });
  const env = { ...allowlisted, ...extraEnv };
  let command = { file: hook.command, args: hook.args ?? [] };
  if (ctx.sandboxMode === "on") {
    if (!ctx.sandbox.ok) return { ok: false, exitCode: null, signal: null, timedOut: false, reason: `sandbox_unavailable: ${ctx.sandbox.reason}` };
    command = wrapInSandbox(
      { file: hook.command, args: hook.args ?? [], cwd: app.appDir },
      {
        appDir: app.appDir,
        dataDir: app.dataDir,
        writableData: app.hasStorage,
        home: ctx.home,
        ownerHome: ctx.ownerHome,
        level: "strict",
        network: false,
        bwrapPath: ctx.sandbox.path,
        userNamespace: ctx.sandbox.userNamespace,
      },
    );
  }
  const result = await execa(command.file, command.args, {
    cwd: app.appDir,
    env,
    extendEnv: false,
    reject: false,
    stdin: "ignore",
    timeout: timeoutSeconds * 1000,
    killSignal: "SIGKILL",
    detached: true,
    cleanup: true,
    all: true,
  });
  for (const line of String(result.all ?? "").split("\n").slice(-20)) if (line) ctx.log(`app ${app.name} hook: ${line}`);
  if (result.exitCode === 0 && !result.timedOut) return { ok: true, exitCode: 0 };
  return {
    ok: false,
    exitCode: result.exitCode ?? null,
    signal: result.signal ?? null,
    timedOut: Boolean(result.timedOut),
    reason: result.timedOut ? "timed out" : result.signal ? `killed by ${result.signal}` : `exit status ${result.exitCode}`,
  };
}
