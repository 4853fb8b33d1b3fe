// Install (INST-01, INST-13, INST-14): re-stage the source, install only if the staged bytes
// still hash to the digest the owner consented to, then packages, the install hook, and one
// atomic rename from quarantine into <home>/apps/<name>. Any failure removes the quarantine
// copy: no folder, no record, and the error names the step.
import { existsSync } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { GatewayError } from "../../workers/contracts/errors";
import type { AppManifest } from "../../workers/contracts/manifest";
import { previewBundle, type PreviewOptions } from "./preview";
import type { InstallReview } from "./review";
import { HOOK_TIMEOUT_SECONDS } from "./review";
import { installNpmPackages, installPythonDependencies, type InstallerContext } from "./install-dependencies";
import { runHook, type HookContext } from "./run-hook";

export type InstallStep = "stage" | "consent" | "python_dependencies" | "npm_packages" | "install_hook" | "move_into_place";

export interface InstallProgressEvent {
  step: InstallStep;
  status: "started" | "done" | "failed" | "skipped";
  at: string;
  message?: string;
}

export interface InstalledApp {
  manifest: AppManifest;
  review: InstallReview;
  digest: string;
  appDir: string;
}

export interface InstallContext extends HookContext, InstallerContext {
  appsDir: string;
  preview: PreviewOptions;
}

function stepFailure(step: InstallStep, reason: string): GatewayError {
  return new GatewayError("install_step_failed", { vars: { step, reason }, detail: { step } });
}

/** Installs `source` if it still matches `consent`; throws a GatewayError naming the step otherwise. */
export async function installApp(
  source: string,
  consent: string | undefined,
  takenNames: ReadonlySet<string>,
  ctx: InstallContext,
  progress: (event: InstallProgressEvent) => void,
): Promise<InstalledApp> {
  const note = (step: InstallStep, status: InstallProgressEvent["status"], message?: string) => progress({ step, status, at: new Date().toISOString(), message });
  note("stage", "started");
  const staged = await previewBundle(source, { ...ctx.preview, keepStaged: true });
  if (!staged.ok) {
    note("stage", "failed", staged.message);
    throw new GatewayError(staged.code as never, { message: staged.message, detail: { path: staged.path, field: staged.field, ...(staged.detail as object | undefined) } });
  }
  note("stage", "done");
  const stagedDir = staged.stagedDir!;
  try {
    if (consent !== staged.digest) {
      note("consent", "failed", "the consent does not match these bytes");
      throw new GatewayError("consent_required", { detail: { review: staged.review, digest: staged.digest } });
    }
    const { manifest } = staged;
    const name = manifest.name;
    const appDir = join(ctx.appsDir, name);
    if (takenNames.has(name) || existsSync(appDir)) throw new GatewayError("app_exists", { vars: { name } });
    note("consent", "done");

    const packageSteps = [
      { step: "python_dependencies", packages: manifest.dependencies?.pythonDependencies ?? [], install: installPythonDependencies },
      { step: "npm_packages", packages: manifest.dependencies?.npmPackages ?? [], install: installNpmPackages },
    ] as const;
    for (const { step, packages, install } of packageSteps) {
      if (packages.length === 0) {
        note(step, "skipped");
        continue;
      }
      note(step, "started", packages.join(", "));
      const result = await install(name, stagedDir, packages, ctx);
      if (!result.ok) throw stepFailure(step, result.reason);
      note(step, "done");
    }

    const hasStorage = manifest.permissions?.storage === true;
    if (hasStorage) await mkdir(join(stagedDir, "data"), { recursive: true, mode: 0o700 });
    const hook = manifest.setup?.onInstall;
    if (hook) {
      note("install_hook", "started");
      // The cap the review showed is the cap applied.
      const seconds = ctx.preview.hookTimeoutSeconds ?? HOOK_TIMEOUT_SECONDS;
      const result = await runHook(hook, { name, appDir: stagedDir, dataDir: join(stagedDir, "data"), hasStorage }, ctx, seconds);
      if (!result.ok) {
        note("install_hook", "failed", result.reason);
        throw result.timedOut
          ? new GatewayError("install_hook_timeout", { vars: { seconds }, detail: { step: "install_hook" } })
          : new GatewayError("install_hook_failed", { vars: { reason: result.reason }, detail: { step: "install_hook" } });
      }
      note("install_hook", "done");
    } else note("install_hook", "skipped");

    note("move_into_place", "started");
    // A concurrent install of the same name may have moved in since the check above: the
    // rename then fails rather than replace it, and this install answers app_exists.
    try {
      await rename(stagedDir, appDir);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOTEMPTY" || code === "EEXIST") throw new GatewayError("app_exists", { vars: { name } });
      throw error;
    }
    // Data kept by an earlier keep-data uninstall of this name comes back with it.
    const parked = parkedDataDir(ctx.appsDir, name);
    if (hasStorage && existsSync(parked)) {
      await rm(join(appDir, "data"), { recursive: true, force: true });
      await rename(parked, join(appDir, "data"));
    }
    note("move_into_place", "done");
    return { manifest, review: staged.review, digest: staged.digest, appDir };
  } catch (error) {
    await rm(stagedDir, { recursive: true, force: true });
    throw error;
  }
}

/** Where a keep-data uninstall parks an app's data/ (UNIN-01); a later install of the name takes it back. */
export function parkedDataDir(appsDir: string, name: string): string {
  return join(appsDir, `.${name}.data`);
}

/** Removes an installed app's folder: its code (and venv) always, its data/ only when purging. */
export async function removeAppFiles(appsDir: string, name: string, purgeData: boolean): Promise<void> {
  const appDir = join(appsDir, name);
  const parked = parkedDataDir(appsDir, name);
  if (!purgeData && existsSync(join(appDir, "data"))) {
    await rm(parked, { recursive: true, force: true });
    await rename(join(appDir, "data"), parked);
  }
  if (purgeData) await rm(parked, { recursive: true, force: true });
  await rm(appDir, { recursive: true, force: true });
}
