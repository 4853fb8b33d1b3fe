// Runs an app's install or uninstall hook: confined like every app child (its own folder
// read-only, data/ writable when it has storage, no network, bounds), from the allowlisted
// environment, killed at its time cap. A hook is a command and arguments, never a shell string.
// The install_hook step an install and an update both run is here too, once.
import { join } from "node:path";
import type { AppManifest } from "../../kernel/contracts/manifest";
import { runConfined, type ConfinementContext } from "../sandbox/run-confined";
import type { PreviewOptions } from "./preview";
import { HOOK_TIMEOUT_SECONDS } from "./review";

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

/** How the install_hook step ended when it did not: the hook's failure and the cap it ran under. */
export type InstallHookFailure = { ok: false; timedOut: boolean; reason: string; seconds: number };

/**
 * The install_hook step of an install and of an update, the one place both call: the manifest's
 * onInstall runs confined in the staged copy (its data/ writable when the app has storage),
 * capped at the time the review showed the owner. Notes started and done, or skipped when there
 * is no hook; a failure is answered, for the caller to note and name in its own code.
 */
export async function installHookStep(
  manifest: AppManifest,
  stagedDir: string,
  ctx: HookContext & { preview: Pick<PreviewOptions, "hookTimeoutSeconds"> },
  note: (step: "install_hook", status: "started" | "done" | "skipped") => Promise<void>,
): Promise<{ ok: true } | InstallHookFailure> {
  const hook = manifest.setup?.onInstall;
  if (!hook) {
    await note("install_hook", "skipped");
    return { ok: true };
  }
  await note("install_hook", "started");
  // The cap the review showed is the cap applied.
  const seconds = ctx.preview.hookTimeoutSeconds ?? HOOK_TIMEOUT_SECONDS;
  const hasStorage = manifest.permissions?.storage === true;
  const result = await runHook(
    hook,
    { name: manifest.name, appDir: stagedDir, dataDir: join(stagedDir, "data"), hasStorage },
    ctx,
    seconds,
  );
  if (!result.ok) return { ok: false, timedOut: result.timedOut, reason: result.reason, seconds };
  await note("install_hook", "done");
  return { ok: true };
}
