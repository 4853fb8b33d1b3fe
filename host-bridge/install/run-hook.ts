// Runs an app's install or uninstall hook: confined like every app child (its own folder
// read-only, data/ writable when it has storage, no network, bounds), from the allowlisted
// environment, killed at its time cap. A hook is a command and arguments, never a shell string.
// It sees a folder the owner granted only when the need says `hooks: true` (hookGrants).
// The install_hook step an install and an update both run is here too, once.
import { join } from "node:path";
import type { AppManifest } from "../../kernel/contracts/manifest";
import { hookGrants, type FolderGrant } from "../../kernel/contracts/folder-grants";
import { runConfined, type ConfinementContext } from "../sandbox/run-confined";
import type { PreviewOptions } from "./preview";
import { HOOK_TIMEOUT_SECONDS } from "./review";

export type HookContext = ConfinementContext & {
  /** The folders the owner granted an installed app, as its record holds them now (none for an app not installed yet). */
  grantedFolders?: (name: string) => Promise<FolderGrant[]>;
};

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
  /** The grants the hook gets: hookGrants of the manifest's needs, bound at /folders/<need>. */
  folders: readonly FolderGrant[] = [],
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
      folders,
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
 * The folders an installed app's hook gets: the record's grants of the needs that say
 * `hooks: true` in `manifest` (the one whose hook runs), none when no need says so.
 */
export async function hookFolders(manifest: AppManifest, ctx: HookContext): Promise<FolderGrant[]> {
  const needs = manifest.permissions?.folders;
  if (!ctx.grantedFolders || !needs?.some((need) => need.hooks === true)) return [];
  return hookGrants(needs, await ctx.grantedFolders(manifest.name));
}

/**
 * The install_hook step of an install and of an update, the one place both call: the manifest's
 * onInstall runs confined in the staged copy (its data/ writable when the app has storage),
 * capped at the time the review showed the owner, with `folders` (an update's hookFolders; a
 * first install has none). Notes started and done, or skipped when there is no hook; a failure
 * is answered, for the caller to note and name in its own code.
 */
export async function installHookStep(
  manifest: AppManifest,
  stagedDir: string,
  ctx: HookContext & { preview: Pick<PreviewOptions, "hookTimeoutSeconds"> },
  note: (step: "install_hook", status: "started" | "done" | "skipped") => Promise<void>,
  folders: readonly FolderGrant[] = [],
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
    {},
    folders,
  );
  if (!result.ok) return { ok: false, timedOut: result.timedOut, reason: result.reason, seconds };
  await note("install_hook", "done");
  return { ok: true };
}
