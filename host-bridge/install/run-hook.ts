// Runs an app's install or uninstall hook: confined like every app child (its own folder
// read-only, data/ writable when it has storage, no network, bounds), from the allowlisted
// environment, killed at its time cap. A hook is a command and arguments, never a shell string.
import { runConfined, type ConfinementContext } from "../sandbox/run-confined";

export type HookContext = ConfinementContext;

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
  const result = await runConfined(
    {
      kind: "hook",
      app,
      command: { file: hook.command, args: hook.args ?? [] },
      cwd: app.appDir,
      writable: [],
      timeoutMs: timeoutSeconds * 1000,
      tag: `app ${app.name} hook`,
      extraEnv,
    },
    ctx,
  );
  if (result.ok) return { ok: true, exitCode: 0 };
  return {
    ok: false,
    exitCode: result.exitCode,
    signal: result.signal,
    timedOut: result.timedOut,
    reason: result.timedOut ? "timed out" : result.reason,
  };
}
