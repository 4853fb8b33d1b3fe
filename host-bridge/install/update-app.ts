// Update (UPD-01..08): the new bytes are staged and reviewed like an install; an update that
// changes none of the disclosure the owner consented to and scans clean needs no new consent.
// The swap keeps the old folder whole at apps/.<name>.rollback, gives the new version a copy
// of data/ (databases through SQLite's backup API) and, when the Python dependencies are the
// same, the old venv/ by rename; it re-runs onInstall in the sandbox and starts the new
// backend. Only a backend that answers its health check within its start timeout (30 s unless
// its manifest's backend.startTimeoutSeconds says otherwise) is kept; otherwise the old
// folder, its untouched data and its backend come back. An app without storage keeps its old
// backend answering meanwhile (the new one starts beside it and takes over once healthy); an
// app with storage is stopped before its data/ is copied. The journal written before the old
// backend stops lets the next start finish or undo a swap a crash interrupted.
import { existsSync } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { GatewayError } from "../../kernel/contracts/errors";
import type { AppManifest } from "../../kernel/contracts/manifest";
import { backendStartTimeoutMs } from "../../kernel/contracts/manifest-backend-ui";
import type { InstallReview, ReviewChange } from "../../kernel/contracts/install-review";
import { installNpmPackages, installPythonDependencies } from "./install-dependencies";
import { npmClosureStep } from "./install-npm-closure";
import { hookFolders, installHookStep } from "./run-hook";
import {
  stageOrRefuse,
  verifyStaged,
  type InstallContext,
  type InstallProgressEvent,
  type StagedBundle,
} from "./install-app";
import { holdAndStop, release } from "../mcp/running-servers";
import { copyAppData, DataChangedDuringCopy } from "./copy-app-data";
import { clearJournal, syncFolder, writeJournal } from "./transition-journal";
import type { ReadyUpdate } from "../../kernel/contracts/bridge-operations";
import { reviewChanges } from "./review-changes";
import { storageFullReason } from "../../kernel/contracts/storage-full";
import { mebibytes, UPDATE_ROOM_MARGIN_BYTES, updateRoom } from "./update-room";
import type { BackendControl } from "./update-backend-control";
import { oldVersionServesThroughUpdate } from "../../kernel/rules/update-serving";

/** Where an update keeps the previous version while it runs. */
export function rollbackDir(appsDir: string, name: string): string {
  return join(appsDir, `.${name}.rollback`);
}

/** What the gateway's record says of the installed copy. */
export interface InstalledCopy {
  manifest: AppManifest;
  review: InstallReview | null;
  digest: string;
  enabled: boolean;
}

/**
 * True when the old version keeps serving until the new one is healthy: the new version has a
 * backend to wait for, and the rule of kernel/rules/update-serving.ts holds (the app runs and has
 * no storage, so nothing can change data/ after its copy). Otherwise the old backend is stopped
 * before the copy (docs/design/app-lifecycle.md).
 */
export function oldServesThroughGate(installed: InstalledCopy, next: AppManifest): boolean {
  return next.backend !== undefined && oldVersionServesThroughUpdate(installed);
}

export interface UpdatedApp {
  manifest: AppManifest;
  review: InstallReview;
  digest: string;
  uiFiles: Record<string, string>;
  changes: ReviewChange[];
  venvMoved: boolean;
}

/** True when the update needs the owner's yes to its digest: its disclosure changed, or the scan is not clean. */
export function updateNeedsConsent(
  installed: InstallReview | null,
  next: InstallReview,
): { needed: boolean; changes: ReviewChange[] } {
  if (!installed) return { needed: true, changes: reviewChanges(null, next) };
  const changes = reviewChanges(installed, next);
  return { needed: changes.length > 0 || next.verdict !== "clean", changes };
}

function samePythonDependencies(a: AppManifest, b: AppManifest): boolean {
  return (
    JSON.stringify(a.dependencies?.pythonDependencies ?? []) ===
    JSON.stringify(b.dependencies?.pythonDependencies ?? [])
  );
}

function stepFailure(name: string, step: string, reason: string): GatewayError {
  return new GatewayError("update_step_failed", { vars: { name, step, reason }, detail: { step } });
}

/**
 * Puts the old version back: the new folder goes (venv/ first returns where it came from), the
 * kept folder moves back to apps/<name>. Safe to run on any state a swap can leave.
 */
export async function restoreRollback(
  appsDir: string,
  name: string,
  stagedDir: string,
  venvMoved: boolean,
): Promise<void> {
  const appDir = join(appsDir, name);
  const kept = rollbackDir(appsDir, name);
  if (!existsSync(kept)) {
    // The old folder never moved: only the staged copy is left to remove.
    await rm(stagedDir, { recursive: true, force: true });
    return;
  }
  for (const newDir of [appDir, stagedDir]) {
    if (venvMoved && existsSync(join(newDir, "venv")) && !existsSync(join(kept, "venv")))
      await rename(join(newDir, "venv"), join(kept, "venv"));
  }
  await rm(stagedDir, { recursive: true, force: true });
  await rm(appDir, { recursive: true, force: true });
  await rename(kept, appDir);
  await syncFolder(appsDir);
}

/** Drops the kept old version: the new one is recorded. */
export async function commitUpdate(home: string, appsDir: string, name: string): Promise<void> {
  await rm(rollbackDir(appsDir, name), { recursive: true, force: true });
  await clearJournal(home, name);
}

/** Undoes an update that swapped but could not be recorded: the old version comes back and runs. */
export async function undoUpdate(
  home: string,
  appsDir: string,
  name: string,
  old: InstalledCopy,
  backend: BackendControl,
): Promise<void> {
  await backend.stop(name);
  await restoreRollback(appsDir, name, join(appsDir, ".quarantine", "none"), true);
  await clearJournal(home, name);
  if (old.enabled && old.manifest.backend) await backend.start(name, old.manifest);
}

type UpdateNote = (step: string, status: InstallProgressEvent["status"], message?: string) => Promise<void>;

/** The journal of one update, written again as it gets further (venv/ moved, then ready). */
type UpdateJournal = (more: { venvMoved: boolean; ready?: ReadyUpdate }) => Promise<unknown>;

/** How far an update got: what its rollback undoes, and the step its error names. */
interface UpdateReach {
  /** The step under way, named by whatever error ends the update. */
  step: string;
  journaled: boolean;
  oldStopped: boolean;
  /** The old backend is held but serving while the new one starts beside it. */
  oldServing: boolean;
  venvMoved: boolean;
}

/** One update under way: what its steps share. */
interface UpdateRun {
  name: string;
  appDir: string;
  stagedDir: string;
  manifest: AppManifest;
  installed: InstalledCopy;
  ctx: InstallContext & { home: string };
  backend: BackendControl;
  note: UpdateNote;
  reached: UpdateReach;
}

/** Updates the installed app `name` from `source`; throws a GatewayError naming the step, after putting the old version back. */
export async function updateApp(
  name: string,
  source: string,
  consent: string | undefined,
  installed: InstalledCopy,
  ctx: InstallContext & { home: string },
  backend: BackendControl,
  progress: (
    event:
      InstallProgressEvent | { step: string; status: InstallProgressEvent["status"]; at: string; message?: string },
  ) => void | Promise<void>,
): Promise<UpdatedApp> {
  const reached: UpdateReach = {
    step: "stage",
    journaled: false,
    oldStopped: false,
    oldServing: false,
    venvMoved: false,
  };
  const note: UpdateNote = async (noted, status, message) => {
    if (status === "started") reached.step = noted;
    return progress({ step: noted, status, at: new Date().toISOString(), message });
  };
  const appDir = join(ctx.appsDir, name);
  const staged = await stageOrRefuse(source, ctx, note);
  const { manifest } = staged;
  const run: UpdateRun = {
    name,
    appDir,
    stagedDir: staged.stagedDir!,
    manifest,
    installed,
    ctx,
    backend,
    note,
    reached,
  };
  try {
    const changes = await consentStep(run, staged, consent);
    // From here on a crash leaves something the next start must finish or undo.
    const journal = updateJournal(run, staged.digest);
    await journal({ venvMoved: false });
    reached.journaled = true;
    const keepVenv = await packageSteps(run);
    await npmClosureStep(name, run.stagedDir, manifest, ctx, note);
    await diskSpaceStep(run);
    await stopOldStep(run);
    await copyDataStep(run);
    await keepRollbackStep(run);
    await moveVenvStep(run, keepVenv, journal);
    await hookStep(run);
    const uiFiles = await verifyStep(run);
    await moveIntoPlaceStep(run);
    const runsBackend = await healthStep(run);
    const updated = {
      manifest,
      review: staged.review,
      digest: staged.digest,
      uiFiles,
      changes,
      venvMoved: reached.venvMoved,
    };
    // The new version serves and writes data/ from now on: whoever settles this journal records
    // it forward, so nothing it writes is ever undone (transition-settlement.ts).
    await journal({
      venvMoved: reached.venvMoved,
      ready: { ...updated, source, previousManifest: installed.manifest },
    });
    if (runsBackend) await note("health", "done");
    else await note("health", "skipped", installed.enabled ? "no backend" : "the app is disabled");
    // Recorded forward first, so a crash from here on keeps the new version, never the old one.
    if (reached.oldServing) await switchStep(run);
    return updated;
  } catch (error) {
    throw await rollBack(run, error);
  } finally {
    if (reached.oldServing) backend.release(name);
    release(ctx.home, name);
  }
}

/**
 * consent: the staged bundle is this app, its folder is there, and the owner consented to these
 * bytes, or the update changes nothing of what the app gets and scans clean. Answers the changes.
 */
async function consentStep(run: UpdateRun, staged: StagedBundle, consent: string | undefined): Promise<ReviewChange[]> {
  const { name, manifest } = run;
  if (manifest.name !== name)
    throw new GatewayError("app_update_name_mismatch", { vars: { name, found: manifest.name } });
  if (!existsSync(run.appDir)) throw stepFailure(name, "stage", "the installed folder is missing");
  const { needed, changes } = updateNeedsConsent(run.installed.review, staged.review);
  if (consent !== undefined ? consent !== staged.digest : needed) {
    await run.note("consent", "failed", "the update changes what the app gets or does not scan clean");
    throw new GatewayError("consent_required", { detail: { review: staged.review, digest: staged.digest, changes } });
  }
  await run.note("consent", "done", needed ? "consented" : "no change to what the app gets");
  return changes;
}

/** The update's journal, started now: written first before anything of the installed app changes. */
function updateJournal(run: UpdateRun, toDigest: string): UpdateJournal {
  const startedAt = new Date().toISOString();
  return (more) =>
    writeJournal(run.ctx.home, {
      op: "update",
      name: run.name,
      fromDigest: run.installed.digest,
      toDigest,
      stagedDir: run.stagedDir,
      startedAt,
      ...more,
    });
}

/**
 * python_dependencies (a new venv only when they changed: otherwise the old venv/ is moved
 * across), then npm_packages. Answers whether the old venv/ is kept.
 */
async function packageSteps(run: UpdateRun): Promise<boolean> {
  const { name, stagedDir, manifest, ctx, note } = run;
  const keepVenv = samePythonDependencies(run.installed.manifest, manifest) && existsSync(join(run.appDir, "venv"));
  const python = manifest.dependencies?.pythonDependencies ?? [];
  if (python.length > 0 && !keepVenv) {
    await note("python_dependencies", "started", python.join(", "));
    const result = await installPythonDependencies(name, stagedDir, python, ctx);
    if (!result.ok) throw stepFailure(name, "python_dependencies", result.reason);
    await note("python_dependencies", "done");
  } else await note("python_dependencies", "skipped", keepVenv ? "unchanged: venv/ is moved across" : undefined);
  const npm = manifest.dependencies?.npmPackages ?? [];
  if (npm.length > 0) {
    await note("npm_packages", "started", npm.join(", "));
    const result = await installNpmPackages(name, stagedDir, npm, ctx);
    if (!result.ok) throw stepFailure(name, "npm_packages", result.reason);
    await note("npm_packages", "done");
  } else await note("npm_packages", "skipped");
  return keepVenv;
}

/** disk_space: room for the copy of data/ (update-room.ts), measured before anything is stopped. */
async function diskSpaceStep({ name, appDir, ctx, note }: UpdateRun): Promise<void> {
  await note("disk_space", "started");
  const room = await updateRoom(join(appDir, "data"), ctx.appsDir);
  if (room.freeBytes < room.neededBytes)
    throw new GatewayError("update_needs_disk_space", {
      vars: {
        name,
        needed: mebibytes(room.neededBytes),
        data: mebibytes(room.dataBytes),
        margin: mebibytes(UPDATE_ROOM_MARGIN_BYTES),
        free: mebibytes(room.freeBytes),
      },
      detail: {
        step: "disk_space",
        needed_bytes: room.neededBytes,
        data_bytes: room.dataBytes,
        free_bytes: room.freeBytes,
      },
    });
  await note("disk_space", "done", `${mebibytes(room.neededBytes)} needed, ${mebibytes(room.freeBytes)} free`);
}

/**
 * stop_old (UPD-08, BACK-24): the old backend is stopped, and its MCP servers stopped and held
 * back until the update is over, before its data is copied.
 */
async function stopOldStep(run: UpdateRun): Promise<void> {
  await run.note("stop_old", "started");
  const serving = oldServesThroughGate(run.installed, run.manifest);
  if (serving) {
    // Held, not stopped: the watchdog must not start it again from a folder that is about to move.
    run.reached.oldServing = true;
    run.backend.hold(run.name);
  } else {
    run.reached.oldStopped = true;
    await run.backend.stop(run.name);
  }
  const mcpStopped = await holdAndStop(run.ctx.home, run.name);
  const said = [
    serving ? OLD_SERVES_NOTE : run.installed.enabled && run.installed.manifest.backend ? OLD_STOPS_NOTE : undefined,
    mcpStopped > 0 ? `${mcpStopped} MCP server run(s) ended` : undefined,
  ].filter((part) => part !== undefined);
  await run.note("stop_old", serving ? "skipped" : "done", said.length > 0 ? said.join("; ") : undefined);
}

/** What the stop_old step says when the old backend keeps serving, and when it cannot. */
export const OLD_SERVES_NOTE =
  "the app declares no storage: its current version keeps answering until the new one is healthy";
export const OLD_STOPS_NOTE =
  "the app declares storage: its backend is stopped before data/ is copied and is down until the new version is healthy";

/** copy_data: the new copy gets its own copy of data/ (copy-app-data.ts), or an empty one when it has storage. */
async function copyDataStep({ name, appDir, stagedDir, manifest, note }: UpdateRun): Promise<void> {
  await note("copy_data", "started");
  const hasStorage = manifest.permissions?.storage === true;
  await rm(join(stagedDir, "data"), { recursive: true, force: true });
  if (existsSync(join(appDir, "data"))) {
    const copied = await copyAppData(join(appDir, "data"), join(stagedDir, "data")).catch((error: unknown) => {
      throw error instanceof DataChangedDuringCopy ? stepFailure(name, "copy_data", error.message) : error;
    });
    await note("copy_data", "done", `${copied.databases.length} database(s), ${copied.files} other file(s)`);
  } else {
    if (hasStorage) await mkdir(join(stagedDir, "data"), { recursive: true, mode: 0o700 });
    await note("copy_data", "skipped");
  }
}

/** keep_rollback: the old folder, whole, moves to apps/.<name>.rollback. */
async function keepRollbackStep({ name, appDir, ctx, note }: UpdateRun): Promise<void> {
  await note("keep_rollback", "started");
  await rm(rollbackDir(ctx.appsDir, name), { recursive: true, force: true });
  await rename(appDir, rollbackDir(ctx.appsDir, name));
  await syncFolder(ctx.appsDir);
  await note("keep_rollback", "done");
}

/** move_venv: the kept venv/ moves into the new copy, journaled first so a rollback brings it back. */
async function moveVenvStep(run: UpdateRun, keepVenv: boolean, journal: UpdateJournal): Promise<void> {
  if (!keepVenv) return run.note("move_venv", "skipped");
  await run.note("move_venv", "started");
  await journal({ venvMoved: true });
  run.reached.venvMoved = true;
  await rename(join(rollbackDir(run.ctx.appsDir, run.name), "venv"), join(run.stagedDir, "venv"));
  await run.note("move_venv", "done");
}

/** install_hook: onInstall runs on the new copy (installHookStep), with the grants the new manifest shares with its hooks. */
async function hookStep({ name, stagedDir, manifest, ctx, note }: UpdateRun): Promise<void> {
  const hook = await installHookStep(manifest, stagedDir, ctx, note, await hookFolders(manifest, ctx));
  if (!hook.ok)
    throw stepFailure(name, "install_hook", hook.timedOut ? `it ran longer than ${hook.seconds} s` : hook.reason);
}

/** verify (verifyStaged); answers the UI files to record. */
async function verifyStep({ stagedDir, manifest, note }: UpdateRun): Promise<Record<string, string>> {
  await note("verify", "started");
  const verified = await verifyStaged(manifest, stagedDir);
  if (!verified.ok) throw verified.error;
  await note("verify", "done");
  return verified.uiFiles;
}

/** move_into_place: the new copy is renamed to apps/<name>. */
async function moveIntoPlaceStep({ appDir, stagedDir, ctx, note }: UpdateRun): Promise<void> {
  await note("move_into_place", "started");
  await rename(stagedDir, appDir);
  await syncFolder(ctx.appsDir);
  await note("move_into_place", "done");
}

/**
 * health: an enabled app's new backend is started and kept only when it answers its health
 * check within its start timeout (the new manifest's backend.startTimeoutSeconds, 30 s unless set). Answers whether a backend was started (its step is noted done once ready).
 */
async function healthStep({ name, manifest, installed, backend, note, reached }: UpdateRun): Promise<boolean> {
  const runsBackend = installed.enabled && manifest.backend !== undefined;
  if (!runsBackend) return false;
  await note("health", "started");
  const timeoutMs = backendStartTimeoutMs(manifest.backend);
  const healthy = reached.oldServing
    ? await backend.startBesideHealthy(name, manifest, timeoutMs)
    : await backend.startHealthy(name, manifest, timeoutMs);
  if (!healthy.ok)
    throw new GatewayError("update_unhealthy", {
      vars: {
        name,
        reason: healthy.reason,
        kept: reached.oldServing
          ? "The previous version answered throughout and still does."
          : "The previous version runs again with its data.",
      },
      // Whether the previous version answered throughout, or was down for the gate (an app with storage).
      detail: { step: "health", kept_answering: reached.oldServing },
    });
  return true;
}

/**
 * switch: the new backend, healthy, takes over from the old one, which stops only then. It comes
 * after the journal says ready, so it never throws into the rollback: the update stands.
 */
async function switchStep({ name, backend, note }: UpdateRun): Promise<void> {
  await note("switch", "started");
  try {
    await backend.switchToNew(name);
    await note("switch", "done", "the new version answers; the old one stopped");
  } catch (error) {
    await note("switch", "failed", error instanceof Error ? error.message : String(error));
  }
}

/**
 * rollback: once the journal was written, the old version comes back (and its backend, if it was
 * stopped); before that, only the staged copy goes. Answers the error the update ends with,
 * naming the step it failed at.
 */
async function rollBack(run: UpdateRun, error: unknown): Promise<unknown> {
  const { name, ctx, installed, backend, note, reached } = run;
  const failedAt = reached.step;
  if (reached.journaled) {
    await note("rollback", "started", error instanceof Error ? error.message : String(error));
    // A new backend started beside the old one goes; the old one answered throughout.
    if (reached.oldServing) await backend.dropNew(name);
    if (reached.oldStopped) await backend.stop(name);
    await restoreRollback(ctx.appsDir, name, run.stagedDir, reached.venvMoved);
    await clearJournal(ctx.home, name);
    if (reached.oldStopped && installed.enabled && installed.manifest.backend)
      await backend.start(name, installed.manifest);
    await note("rollback", "done");
  } else {
    await rm(run.stagedDir, { recursive: true, force: true });
  }
  if (error instanceof GatewayError) return error;
  // A full disk is what every other write answers it with (507 storage_full), naming the step.
  const full = storageFullReason(error);
  if (full !== null)
    return new GatewayError("storage_full", {
      vars: { reason: `${full} at the update's step '${failedAt}'; the previous version is kept` },
      detail: { step: failedAt },
    });
  return stepFailure(name, failedAt, error instanceof Error ? error.message : String(error));
}
