// Install (INST-01, INST-13, INST-14): re-stage the source, install only if the staged bytes
// still hash to the digest the owner consented to, then packages, the install hook, and one
// atomic rename from quarantine into <home>/apps/<name>. Everything the install needs is
// checked before that first move (the UI folder holds no link, the record can be written);
// any failure removes the quarantine copy, and a failure after the move undoes it: no
// folder, no record, no stuck name, and the error names the step (issue 11 item 6).
import { existsSync } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { AppManifestSchema, uiFolderOf } from "../../kernel/contracts/manifest";
import type { ParkedDataView } from "../../kernel/contracts/parked-data";
import { parseStrictJson } from "../../kernel/text/strict-json";
import { join } from "node:path";
import { storageFullReason } from "../../kernel/contracts/storage-full";
import { GatewayError } from "../../kernel/contracts/errors";
import type { AppManifest } from "../../kernel/contracts/manifest";
import { previewBundle, type PreviewOptions } from "./preview";
import type { InstallReview } from "../../kernel/contracts/install-review";
import { installNpmPackages, installPythonDependencies, type InstallerContext } from "./install-dependencies";
import { installHookStep, type HookContext } from "./run-hook";
import { npmClosureStep } from "./install-npm-closure";
import { adoptParkedData, parkData, parkedDataDir, parkedDataOf } from "./parked-data";
import { listUiFiles } from "./ui-files";
import { clearJournal, syncFolder, writeJournal } from "./transition-journal";

export type InstallStep =
  | "stage"
  | "consent"
  | "python_dependencies"
  | "npm_packages"
  | "npm_closure"
  | "install_hook"
  | "verify"
  | "move_into_place";

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
  /** The served UI files: path inside the UI folder -> sha256 hex of the bytes moved into place. */
  uiFiles: Record<string, string>;
  /** The parked data this install adopted (with the owner's adopt_data), null when it started fresh. */
  adoptedData: ParkedDataView | null;
}

export interface InstallContext extends HookContext, InstallerContext {
  appsDir: string;
  preview: PreviewOptions;
}

export interface InstallOptions {
  /** The owner's explicit consent to take over the data an earlier install of the name parked. */
  adoptData?: boolean;
  /** Runs right after the move into place; a failure there is undone like any late failure. */
  afterMove?: (appDir: string) => Promise<void>;
}

// The record the gateway writes holds the manifest; a manifest that cannot be written as JSON
// of a sane size is refused before anything moves (the registry row and its RPC copy).
const MAX_RECORD_MANIFEST_BYTES = 512 * 1024;

/** Refuses a manifest the gateway could not record; the failure would otherwise come after the move. */
export function checkRecordable(manifest: AppManifest, uiFiles: Record<string, string>): GatewayError | null {
  let text: string;
  try {
    text = JSON.stringify({ manifest, uiFiles });
  } catch (error) {
    return new GatewayError("install_not_recordable", {
      vars: { reason: `the manifest cannot be written as JSON (${(error as Error).message})` },
      detail: { step: "verify" },
    });
  }
  if (text.length > MAX_RECORD_MANIFEST_BYTES) {
    return new GatewayError("install_not_recordable", {
      vars: { reason: `the record would be larger than ${MAX_RECORD_MANIFEST_BYTES} bytes` },
      detail: { step: "verify" },
    });
  }
  const reread = parseStrictJson(text);
  if (!reread.ok || !AppManifestSchema.safeParse((reread.value as { manifest: unknown }).manifest).success) {
    return new GatewayError("install_not_recordable", {
      vars: { reason: "the manifest does not read back as the same manifest" },
      detail: { step: "verify" },
    });
  }
  return null;
}

function stepFailure(step: InstallStep, reason: string): GatewayError {
  return new GatewayError("install_step_failed", { vars: { step, reason }, detail: { step } });
}

/** A bundle staged into quarantine and previewed, kept there for the steps that follow. */
export type StagedBundle = Extract<Awaited<ReturnType<typeof previewBundle>>, { ok: true }>;

type InstallNote = (step: InstallStep, status: InstallProgressEvent["status"], message?: string) => Promise<void>;

/**
 * The first step of an install and of an update: stage and scan `source` into quarantine (kept
 * there for the steps that follow), or refuse with the staging's own code, naming the path.
 */
export async function stageOrRefuse(
  source: string,
  ctx: Pick<InstallContext, "preview" | "appsDir">,
  note: (step: "stage", status: InstallProgressEvent["status"], message?: string) => Promise<void>,
): Promise<StagedBundle> {
  await note("stage", "started");
  const staged = await previewBundle(source, { ...ctx.preview, appsDir: ctx.appsDir, keepStaged: true });
  if (!staged.ok) {
    await note("stage", "failed", staged.message);
    throw new GatewayError(staged.code as never, {
      message: staged.message,
      detail: { path: staged.path, field: staged.field, ...(staged.detail as object | undefined) },
    });
  }
  await note("stage", "done");
  return staged;
}

/**
 * The verify step of an install and of an update, the one place both call: the install steps ran
 * after staging, so the UI folder is listed again (no link may have been planted) and hashed, and
 * the record is checked; the refusal is answered, for the caller to note.
 */
export async function verifyStaged(
  manifest: AppManifest,
  stagedDir: string,
): Promise<{ ok: true; uiFiles: Record<string, string> } | { ok: false; error: GatewayError }> {
  const uiFolder = uiFolderOf(manifest);
  const listed = uiFolder === null ? { ok: true as const, files: {} } : await listUiFiles(stagedDir, uiFolder);
  if (!listed.ok) {
    return {
      ok: false,
      error: new GatewayError(listed.code, {
        message: listed.message,
        detail: { step: "verify", path: listed.path, field: listed.field },
      }),
    };
  }
  const unrecordable = checkRecordable(manifest, listed.files);
  if (unrecordable) return { ok: false, error: unrecordable };
  return { ok: true, uiFiles: listed.files };
}

/** Installs `source` if it still matches `consent`; throws a GatewayError naming the step otherwise. */
export async function installApp(
  source: string,
  consent: string | undefined,
  takenNames: ReadonlySet<string>,
  ctx: InstallContext,
  progress: (event: InstallProgressEvent) => void | Promise<void>,
  opts: InstallOptions = {},
): Promise<InstalledApp> {
  const note: InstallNote = async (step, status, message) =>
    progress({ step, status, at: new Date().toISOString(), message });
  const staged = await stageOrRefuse(source, ctx, note);
  const stagedDir = staged.stagedDir!;
  try {
    const { manifest } = staged;
    const adopting = await consentStep(staged, consent, takenNames, ctx.appsDir, opts, note);
    await packageSteps(manifest, stagedDir, ctx, note);
    await npmClosureStep(manifest.name, stagedDir, manifest, ctx, note);
    await hookStep(manifest, stagedDir, ctx, note);
    // Everything the record needs is checked before the first move.
    const uiFiles = await verifyStep(manifest, stagedDir, note);
    const appDir = await moveIntoPlaceStep(staged, adopting, ctx, opts, note);
    return { manifest, review: staged.review, digest: staged.digest, appDir, uiFiles, adoptedData: adopting };
  } catch (error) {
    await rm(stagedDir, { recursive: true, force: true });
    const full = error instanceof GatewayError ? null : storageFullReason(error);
    if (full !== null) throw new GatewayError("storage_full", { vars: { reason: full }, detail: { step: "install" } });
    throw error;
  }
}

/**
 * consent: the staged bytes hash to the digest the owner consented to, the name is free, and
 * kept data is adopted only with the owner's explicit yes and only by an app that has a data/.
 * Answers the parked data this install adopts, or null.
 */
async function consentStep(
  staged: StagedBundle,
  consent: string | undefined,
  takenNames: ReadonlySet<string>,
  appsDir: string,
  opts: InstallOptions,
  note: InstallNote,
): Promise<ParkedDataView | null> {
  if (consent !== staged.digest) {
    await note("consent", "failed", "the consent does not match these bytes");
    throw new GatewayError("consent_required", { detail: { review: staged.review, digest: staged.digest } });
  }
  const { manifest } = staged;
  const name = manifest.name;
  if (takenNames.has(name) || existsSync(join(appsDir, name))) throw new GatewayError("app_exists", { vars: { name } });
  const parked = await parkedDataOf(appsDir, name);
  if (opts.adoptData === true) {
    if (!parked) throw new GatewayError("parked_data_not_found", { vars: { name } });
    if (manifest.permissions?.storage !== true)
      throw new GatewayError("parked_data_not_adoptable", {
        vars: { name, reason: "this bundle does not declare permissions.storage" },
      });
  }
  await note("consent", "done");
  return opts.adoptData === true ? parked : null;
}

/** python_dependencies, then npm_packages: each installed confined into the staged copy, or skipped when none. */
async function packageSteps(
  manifest: AppManifest,
  stagedDir: string,
  ctx: InstallContext,
  note: InstallNote,
): Promise<void> {
  const steps = [
    {
      step: "python_dependencies",
      packages: manifest.dependencies?.pythonDependencies ?? [],
      install: installPythonDependencies,
    },
    { step: "npm_packages", packages: manifest.dependencies?.npmPackages ?? [], install: installNpmPackages },
  ] as const;
  for (const { step, packages, install } of steps) {
    if (packages.length === 0) {
      await note(step, "skipped");
      continue;
    }
    await note(step, "started", packages.join(", "));
    const result = await install(manifest.name, stagedDir, packages, ctx);
    if (!result.ok) throw stepFailure(step, result.reason);
    await note(step, "done");
  }
}

/** install_hook: data/ is made for an app with storage, then onInstall runs (installHookStep). */
async function hookStep(
  manifest: AppManifest,
  stagedDir: string,
  ctx: InstallContext,
  note: InstallNote,
): Promise<void> {
  if (manifest.permissions?.storage === true) await mkdir(join(stagedDir, "data"), { recursive: true, mode: 0o700 });
  const hook = await installHookStep(manifest, stagedDir, ctx, note);
  if (hook.ok) return;
  await note("install_hook", "failed", hook.reason);
  throw hook.timedOut
    ? new GatewayError("install_hook_timeout", { vars: { seconds: hook.seconds }, detail: { step: "install_hook" } })
    : new GatewayError("install_hook_failed", { vars: { reason: hook.reason }, detail: { step: "install_hook" } });
}

/** verify (verifyStaged); answers the UI files to record. */
async function verifyStep(
  manifest: AppManifest,
  stagedDir: string,
  note: InstallNote,
): Promise<Record<string, string>> {
  await note("verify", "started");
  const verified = await verifyStaged(manifest, stagedDir);
  if (!verified.ok) {
    await note("verify", "failed", verified.error.message);
    throw verified.error;
  }
  await note("verify", "done");
  return verified.uiFiles;
}

/**
 * move_into_place: the journal, one rename from quarantine into apps/<name>, then the adopted
 * data and the caller's afterMove; a failure after the rename is undone. Answers the app folder.
 */
async function moveIntoPlaceStep(
  staged: StagedBundle,
  adopting: ParkedDataView | null,
  ctx: InstallContext,
  opts: InstallOptions,
  note: InstallNote,
): Promise<string> {
  const name = staged.manifest.name;
  const appDir = join(ctx.appsDir, name);
  await note("move_into_place", "started");
  // The journal comes first: a crash after the move leaves a folder the gateway may not have
  // recorded yet, and the next start decides from the record whether to keep it or undo it.
  if (
    !(await writeJournal(
      ctx.home,
      { op: "install", name, digest: staged.digest, adoptedData: adopting, startedAt: new Date().toISOString() },
      { exclusive: true },
    ))
  ) {
    throw new GatewayError("app_exists", { vars: { name } });
  }
  // A concurrent install of the same name may have moved in since the check above: the
  // rename then fails rather than replace it, and this install answers app_exists.
  try {
    await rename(staged.stagedDir!, appDir);
    await syncFolder(ctx.appsDir);
  } catch (error) {
    await clearJournal(ctx.home, name);
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOTEMPTY" || code === "EEXIST") throw new GatewayError("app_exists", { vars: { name } });
    throw error;
  }
  try {
    if (adopting) {
      await rm(join(appDir, "data"), { recursive: true, force: true });
      await adoptParkedData(ctx.appsDir, name, join(appDir, "data"));
    }
    await opts.afterMove?.(appDir);
  } catch (error) {
    await undoInstall(ctx.appsDir, name, adopting);
    await clearJournal(ctx.home, name);
    await note("move_into_place", "failed", error instanceof Error ? error.message : String(error));
    if (error instanceof GatewayError) throw error;
    throw stepFailure("move_into_place", error instanceof Error ? error.message : String(error));
  }
  await note("move_into_place", "done");
  return appDir;
}

/**
 * Undoes an install that moved into place but could not be completed (the record could not be
 * written): adopted data goes back to where it was parked, with its record, and the folder
 * goes. Afterwards the name is free again.
 */
export async function undoInstall(appsDir: string, name: string, adopted: ParkedDataView | null): Promise<void> {
  const appDir = join(appsDir, name);
  if (adopted && existsSync(join(appDir, "data")) && !existsSync(parkedDataDir(appsDir, name))) {
    if (adopted.version !== null && adopted.consentDigest !== null && adopted.parkedAt !== null) {
      await parkData(appsDir, join(appDir, "data"), {
        name,
        version: adopted.version,
        consentDigest: adopted.consentDigest,
        parkedAt: adopted.parkedAt,
      });
    } else {
      await rename(join(appDir, "data"), parkedDataDir(appsDir, name));
    }
  }
  await rm(appDir, { recursive: true, force: true });
}

/** Which install a kept data/ comes from. */
export interface InstallIdentity {
  version: string;
  consentDigest: string;
}

/**
 * Removes an installed app's folder: its code (and venv) always; its data/ only when purging,
 * otherwise parked with a record of the install it belongs to. The folder first leaves its
 * place in one rename (to `trashDir`, in the quarantine), so a crash never leaves half a
 * folder at apps/<name>. Data an earlier install parked is never touched here.
 */
export async function removeAppFiles(
  appsDir: string,
  name: string,
  purgeData: boolean,
  identity: InstallIdentity,
  trashDir?: string,
): Promise<void> {
  const appDir = join(appsDir, name);
  const from = trashDir ?? appDir;
  if (trashDir && existsSync(appDir)) {
    await rename(appDir, trashDir);
    await syncFolder(appsDir);
  }
  await finishRemoval(appsDir, name, from, purgeData, identity);
}

/** Parks (or drops) data/ of a folder that left its place, then deletes the folder. */
export async function finishRemoval(
  appsDir: string,
  name: string,
  folder: string,
  purgeData: boolean,
  identity: InstallIdentity,
): Promise<void> {
  // parkData refuses to replace data an earlier install parked: the folder then stays where it is.
  if (!purgeData && existsSync(join(folder, "data"))) {
    await parkData(appsDir, join(folder, "data"), {
      name,
      version: identity.version,
      consentDigest: identity.consentDigest,
      parkedAt: new Date().toISOString(),
    });
  }
  await rm(folder, { recursive: true, force: true });
}
