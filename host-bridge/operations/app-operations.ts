// The bridge's /apps/ operations: previews, installs, updates and removals with their undo and
// commit steps, parked data, native-app proofs and transition progress.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { GatewayError } from "../../kernel/contracts/errors";
import type { AppManifest } from "../../kernel/contracts/manifest";
import type { InstallReview } from "../../kernel/contracts/install-review";
import { previewBundle } from "../install/preview";
import { installApp, removeAppFiles, undoInstall } from "../install/install-app";
import { dropPendingPackages } from "../durability/restore-packages";
import { updateBackendControl } from "../install/update-backend-control";
import { updateFileChanges } from "../install/file-changes";
import { commitUpdate, undoUpdate, updateApp, updateNeedsConsent } from "../install/update-app";
import { clearJournal, readJournal, writeJournal } from "../install/transition-journal";
import { listParkedData, parkedDataDir, purgeParkedData } from "../install/parked-data";
import { hookFolders, runHook } from "../install/run-hook";
import { readBackendLog } from "../supervisor/backend-log-tail";
import type { HandlersUnder } from "../bridge-contract";
import type { BridgeParsedRequest } from "../../kernel/contracts/bridge-operations";
import type { BridgeRuntime } from "../bridge-runtime";
import type { ProgressSink } from "../transition-progress";

function refusalError(refusal: {
  code: string;
  message: string;
  path?: string;
  field?: string;
  detail?: unknown;
}): GatewayError {
  return GatewayError.fromEnvelope(
    refusal.code,
    refusal.message,
    { path: refusal.path, field: refusal.field, ...(refusal.detail as object | undefined) },
    422,
  );
}

function now(): string {
  return new Date().toISOString();
}

export function appOperations(rt: BridgeRuntime): HandlersUnder<"/apps/"> {
  const { paths } = rt.opts;
  return {
    "POST /apps/preview": async ({ body: { source, installedReview, installedName } }) => {
      const result = await previewBundle(source, rt.previewOptions);
      if (!result.ok) throw refusalError(result);
      if (installedReview === undefined) return { review: result.review, digest: result.digest };
      // Previewed as an update: what changes against the review the owner consented to, and its files.
      const { needed, changes } = updateNeedsConsent(installedReview as InstallReview | null, result.review);
      const files =
        installedName === undefined
          ? null
          : await updateFileChanges(paths.apps, installedName, installedReview, result.review, result.listing);
      return {
        review: result.review,
        digest: result.digest,
        changes,
        consentNeeded: needed,
        ...(files ? { files } : {}),
      };
    },
    "POST /apps/install": async ({ body, caller }) =>
      rt.settlement.track(
        caller,
        (answer) => answer?.manifest.name ?? null,
        () => installFromRequest(rt, body),
      ),
    "POST /apps/install-undo": async ({ body: { name, adoptedData } }) => {
      await rt.stopBackend(name);
      await undoInstall(paths.apps, name, adoptedData);
      await clearJournal(paths.home, name);
      return { undone: true };
    },
    "POST /apps/transition-commit": async ({ body: { name } }) => {
      const journal = await readJournal(paths.home, name);
      await rt.progress.sink(journal?.op ?? "transition", undefined)({ step: "commit", status: "started", at: now() });
      if (journal?.op === "update") await commitUpdate(paths.home, paths.apps, name);
      else await clearJournal(paths.home, name);
      return { committed: true };
    },
    "POST /apps/update": async ({ body, caller }) =>
      rt.settlement.track(
        caller,
        () => body.name,
        () => updateFromRequest(rt, body),
      ),
    "POST /apps/update-undo": async ({ body: { name, installed } }) => {
      await undoUpdate(
        paths.home,
        paths.apps,
        name,
        { ...installed, manifest: installed.manifest as AppManifest, review: null },
        updateBackendControl(rt),
      );
      return { undone: true };
    },
    "POST /apps/logs": async ({ body }) => readBackendLog(paths.gatewayLog, body),
    "POST /apps/parked": async () => ({ parked: await listParkedData(paths.apps) }),
    "POST /apps/parked/purge": async ({ body: { name } }) => {
      await purgeParkedData(paths.apps, name);
      return { purged: name };
    },
    // Only what this start itself staged from the package's own apps/native/ folder may be
    // recorded as a locked native app (issue 11 item 8).
    "POST /apps/native/verify": async ({ body: { source, digest } }) => {
      const proof = rt.nativeProofs.get(source);
      if (!proof || proof.digest !== digest)
        throw new GatewayError("native_app_unproven", { vars: { source: source.slice(0, 300) } });
      return proof;
    },
    "POST /apps/install-progress": async ({ body: { id } }) => ({ steps: rt.progress.steps(id) }),
    "POST /apps/remove": async ({ body, caller }) =>
      rt.settlement.track(
        caller,
        () => body.name,
        () => removeApp(rt, body),
      ),
  };
}

/** Installs the consented bundle (install-app.ts) and answers what the gateway records. */
async function installFromRequest(rt: BridgeRuntime, request: BridgeParsedRequest<"POST /apps/install">) {
  const installed = await installApp(
    request.source,
    request.consent,
    new Set(request.takenNames),
    rt.hookContext(),
    rt.progress.sink("install", request.installId),
    { adoptData: request.adoptData === true },
  );
  return {
    manifest: installed.manifest,
    review: installed.review,
    digest: installed.digest,
    uiFiles: installed.uiFiles,
    adoptedData: installed.adoptedData,
  };
}

/** Updates an installed app (update-app.ts) and answers what the gateway records. */
async function updateFromRequest(rt: BridgeRuntime, request: BridgeParsedRequest<"POST /apps/update">) {
  const installed = {
    ...request.installed,
    manifest: request.installed.manifest as AppManifest,
    review: request.installed.review as InstallReview | null,
  };
  const updated = await updateApp(
    request.name,
    request.source,
    request.consent,
    installed,
    rt.hookContext(),
    updateBackendControl(rt),
    rt.progress.sink("update", request.installId),
  );
  // The new copy was installed with its packages, as any update's is.
  dropPendingPackages(rt.opts.paths.home, request.name);
  return {
    manifest: updated.manifest,
    review: updated.review,
    digest: updated.digest,
    uiFiles: updated.uiFiles,
    changes: updated.changes,
    venvMoved: updated.venvMoved,
  };
}

type RemoveRequest = BridgeParsedRequest<"POST /apps/remove">;

/**
 * Removes an installed app in its teardown order (UNIN-02): the uninstall hook, then the
 * backend, then the files (journaled first), then its sealed copies of the owner's secrets.
 */
async function removeApp(
  rt: BridgeRuntime,
  { name, purgeData, manifest, version, consentDigest, installId }: RemoveRequest,
): Promise<{
  removed: true;
  uninstallHook: string | null;
  secretsTakenBack: Array<{ as: string; secret: string | null }>;
}> {
  const { paths } = rt.opts;
  const note = rt.progress.sink("uninstall", installId);
  // Checked before anything is torn down: parking over an earlier install's data would destroy it.
  if (!purgeData && existsSync(join(paths.apps, name, "data")) && existsSync(parkedDataDir(paths.apps, name))) {
    throw new GatewayError("parked_data_exists", { vars: { name } });
  }
  const hookResult = await uninstallHookStep(rt, name, manifest as AppManifest | undefined, purgeData, note);
  await note({ step: "stop_backend", status: "started", at: now() });
  await rt.stopBackend(name);
  // The journal before the folder leaves: the next start finishes a removal a crash cut short.
  const trashDir = join(paths.quarantine, `${name}.removing-${Date.now()}`);
  await writeJournal(paths.home, {
    op: "uninstall",
    name,
    purgeData,
    version,
    consentDigest,
    trashDir,
    startedAt: now(),
  });
  await note({ step: "remove_files", status: "started", at: now() });
  await removeAppFiles(paths.apps, name, purgeData, { version, consentDigest }, trashDir);
  await note({ step: "remove_files", status: "done", at: now() });
  // Its sealed copies of the owner's secrets go with it (a recovery that finishes this
  // removal does the same: recover-transitions.ts); the owner's own stored copies stay.
  const secretsTakenBack = rt.secrets.forgetApp(name);
  rt.digests.delete(name);
  // A restored app still owed its packages owes nothing once gone: a new install of the name starts.
  dropPendingPackages(paths.home, name);
  return { removed: true, uninstallHook: hookResult, secretsTakenBack };
}

/**
 * uninstall_hook: the manifest's onUninstall runs confined in the installed folder, told
 * whether its data is kept; a failure is logged and the removal goes on. Answers "ok", the
 * failure's reason, or null when no hook ran.
 */
async function uninstallHookStep(
  rt: BridgeRuntime,
  name: string,
  manifest: AppManifest | undefined,
  purgeData: boolean,
  note: ProgressSink,
): Promise<string | null> {
  const hook = manifest?.setup?.onUninstall;
  const appDir = join(rt.opts.paths.apps, name);
  await note({ step: "uninstall_hook", status: hook ? "started" : "skipped", at: now() });
  if (!hook || !existsSync(appDir)) return null;
  const ctx = rt.hookContext();
  const result = await runHook(
    hook,
    {
      name,
      appDir,
      dataDir: join(appDir, "data"),
      hasStorage: (manifest as AppManifest).permissions?.storage === true,
    },
    ctx,
    rt.opts.hookTimeoutSeconds,
    { KEEP_DATA: purgeData ? "0" : "1", PURGE_DATA: purgeData ? "1" : "0" },
    await hookFolders(manifest as AppManifest, ctx),
  );
  if (!result.ok) rt.opts.log(`bridge: ${name}'s uninstall hook failed (${result.reason}); removing it anyway`);
  return result.ok ? "ok" : result.reason;
}
