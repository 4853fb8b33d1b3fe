// The packages of restored apps (docs/backup-and-restore.md, "Packages"). An archive holds no
// installed packages (venv/, node_modules/): a replace lists the apps whose install fetched some
// in <home>/restore-packages.json, and the bridge's next start installs them again, confined, with
// the very installers an install uses, from the pinned bytes the archive carried (a generated
// Python app's wheels/, an npm closure's tarballs in node_modules/.personalclaw-npm-cache/) or,
// where it carried none, fetched through the same egress rules. Pins are checked (a wheel's
// sha256 against pypi-closure.json; npm checks each tarball against its integrity). An app whose
// packages cannot be installed keeps its entry with the failure's code, has nothing half
// installed, and is not started — neither its backend nor its MCP servers — until a start
// installs them.
import { existsSync } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { GatewayError } from "../../kernel/contracts/errors";
import type { PackagesOutcome } from "../../kernel/contracts/durability";
import { AppManifestSchema, type AppManifest } from "../../kernel/contracts/manifest";
import { PypiClosureRecordSchema } from "../../kernel/contracts/pypi-closure";
import { APP_NAME_PATTERN } from "../../kernel/rules/app-name";
import { removePrivateFile, writePrivateFile } from "../private-file";
import { readPrivateRecordFile } from "../private-record";
import { PYPI_CLOSURE_FILE } from "../sources/pypi-app";
import {
  installNpmPackages,
  installPythonDependencies,
  NPM_CLOSURE_CACHE,
  type InstallerContext,
} from "../install/install-dependencies";
import { installNpmClosure } from "../install/install-npm-closure";
import { hashNoFollow } from "../install/ui-files";
import { pauseAtNamedStep } from "../install/test-pause";

const PendingAppSchema = z.strictObject({
  name: z.string().regex(APP_NAME_PATTERN),
  /** The last attempt's failure: a stable code and its sentence. */
  failed: z.strictObject({ code: z.string().max(64), reason: z.string().max(2000) }).optional(),
});
export type PendingApp = z.infer<typeof PendingAppSchema>;
const PendingSchema = z.strictObject({ version: z.literal(1), apps: z.array(PendingAppSchema).max(1000) });

/** The list of restored apps whose packages are still to be installed (0600, beside apps/). */
export function pendingPackagesPath(home: string): string {
  return join(home, "restore-packages.json");
}

/**
 * The apps still waiting for their packages. A list that cannot be read holds every app back
 * rather than none: `unreadable` makes the caller refuse their starts.
 */
export function readPendingPackages(home: string): PendingApp[] | "unreadable" {
  const read = readPrivateRecordFile(pendingPackagesPath(home), PendingSchema);
  if (read.found === "none") return [];
  return read.found === "record" ? read.value.apps : "unreadable";
}

/** Writes the list (removed once empty). */
export function writePendingPackages(home: string, apps: readonly PendingApp[]): void {
  if (apps.length === 0) {
    removePrivateFile(pendingPackagesPath(home));
    return;
  }
  writePrivateFile(pendingPackagesPath(home), `${JSON.stringify({ version: 1, apps }, null, 2)}\n`);
}

/** Puts `names` on the list (a merge restore, before it places their folders), each once, without a failure yet. */
export function addPendingPackages(home: string, names: readonly string[]): void {
  if (names.length === 0) return;
  const pending = readPendingPackages(home);
  const kept = pending === "unreadable" ? [] : pending.filter((p) => !names.includes(p.name));
  writePendingPackages(home, [...kept, ...names.map((name) => ({ name }))]);
}

/**
 * Writes one app's outcome into the list as it is now (read again: a merge may have added apps
 * since it was read): off the list once installed, kept with its failure otherwise.
 */
function settlePendingEntry(home: string, name: string, failed: PendingApp["failed"]): void {
  const pending = readPendingPackages(home);
  if (pending === "unreadable") return;
  writePendingPackages(
    home,
    failed === undefined
      ? pending.filter((p) => p.name !== name)
      : pending.map((p) => (p.name === name ? { name, failed } : p)),
  );
}

/** Takes `name` off the list: its folder was removed, or an update installed its packages into a new copy. */
export function dropPendingPackages(home: string, name: string): void {
  const pending = readPendingPackages(home);
  if (pending === "unreadable" || !pending.some((p) => p.name === name)) return;
  writePendingPackages(
    home,
    pending.filter((p) => p.name !== name),
  );
}

/** Why `name` may not start yet, or null: its packages are still to be installed. */
export function packagesHoldBack(home: string, name: string): GatewayError | null {
  const pending = readPendingPackages(home);
  const entry = pending === "unreadable" ? { name } : pending.find((p) => p.name === name);
  if (entry === undefined) return null;
  const why =
    pending === "unreadable"
      ? `${pendingPackagesPath(home)} cannot be read`
      : (entry as PendingApp).failed
        ? `the last attempt failed (${(entry as PendingApp).failed!.code}: ${(entry as PendingApp).failed!.reason})`
        : "they have not been installed yet";
  return new GatewayError("packages_not_restored", { vars: { name, why } });
}

function manifestOf(appDir: string): AppManifest {
  const read = readPrivateRecordFile(join(appDir, "app.json"), AppManifestSchema);
  if (read.found !== "record")
    throw new GatewayError("install_step_failed", {
      vars: { step: "restore_packages", reason: "its app.json cannot be read" },
    });
  return read.value;
}

/** Every wheel pypi-closure.json pins is in wheels/ with its sha256; an app without the record has nothing to check. */
async function checkPinnedWheels(appDir: string): Promise<void> {
  const read = readPrivateRecordFile(join(appDir, PYPI_CLOSURE_FILE), PypiClosureRecordSchema);
  if (read.found === "none") return;
  if (read.found === "unreadable")
    throw new GatewayError("install_step_failed", {
      vars: { step: "python_dependencies", reason: `${PYPI_CLOSURE_FILE} cannot be read: ${read.reason}` },
    });
  for (const wheel of read.value.wheels)
    if ((await hashNoFollow(join(appDir, "wheels", wheel.file))) !== wheel.sha256)
      throw new GatewayError("pypi_hash_mismatch", {
        vars: { file: wheel.file, sha256: wheel.sha256 },
        detail: { step: "python_dependencies", file: wheel.file },
      });
}

/** Removes what an install put in the app folder (venv/, node_modules/ but npm's kept tarballs). */
async function removeInstalled(appDir: string): Promise<void> {
  await rm(join(appDir, "venv"), { recursive: true, force: true });
  const modules = join(appDir, "node_modules");
  for (const entry of await readdir(modules).catch(() => [] as string[]))
    if (entry !== NPM_CLOSURE_CACHE) await rm(join(modules, entry), { recursive: true, force: true });
}

function stepFailed(step: string, reason: string): GatewayError {
  return new GatewayError("install_step_failed", { vars: { step, reason }, detail: { step } });
}

/** Installs one restored app's packages into its folder, all or nothing; throws a GatewayError naming why. */
export async function reinstallPackages(name: string, appDir: string, ctx: InstallerContext): Promise<void> {
  await removeInstalled(appDir);
  try {
    const manifest = manifestOf(appDir);
    const python = manifest.dependencies?.pythonDependencies ?? [];
    if (python.length > 0) {
      if (existsSync(join(appDir, "wheels"))) await checkPinnedWheels(appDir);
      const result = await installPythonDependencies(name, appDir, python, ctx);
      if (!result.ok) throw stepFailed("python_dependencies", result.reason);
    }
    const npm = manifest.dependencies?.npmPackages ?? [];
    if (npm.length > 0) {
      const result = await installNpmPackages(name, appDir, npm, ctx);
      if (!result.ok) throw stepFailed("npm_packages", result.reason);
    }
    if (manifest.dependencies?.npmClosure === true) await installNpmClosure(name, appDir, ctx);
  } catch (error) {
    await removeInstalled(appDir);
    throw error instanceof GatewayError
      ? error
      : stepFailed("restore_packages", error instanceof Error ? error.message : String(error));
  }
}

/**
 * Installs the packages of every app the list names, one after the other, and writes back the
 * list of those still waiting (with why). Each app's outcome is handed to `reported` and awaited
 * before the list is written, so an app off the list has its outcome on record.
 */
async function restorePendingPackages(
  home: string,
  appsDir: string,
  ctx: InstallerContext,
  reported: (outcome: PackagesOutcome) => Promise<void>,
): Promise<PackagesOutcome[]> {
  const pending = readPendingPackages(home);
  if (pending === "unreadable" || pending.length === 0) return [];
  const outcomes: PackagesOutcome[] = [];
  for (const app of pending) {
    const appDir = join(appsDir, app.name);
    if (!existsSync(appDir)) continue; // uninstalled meanwhile: nothing to hold back
    let outcome: PackagesOutcome;
    try {
      await reinstallPackages(app.name, appDir, ctx);
      if (TEST_BUILD) await pauseAtNamedStep(home, "packages:installed", ctx.log);
      outcome = { name: app.name, ok: true };
    } catch (error) {
      const code = error instanceof GatewayError ? error.code : "install_step_failed";
      const reason = (error instanceof Error ? error.message : String(error)).slice(0, 2000);
      outcome = { name: app.name, ok: false, code, reason };
    }
    outcomes.push(outcome);
    await reported(outcome);
    // Written after each app: a kill between two leaves the finished ones off the list.
    settlePendingEntry(home, app.name, outcome.ok ? undefined : { code: outcome.code!, reason: outcome.reason! });
  }
  return outcomes;
}

/** A security-log row as the bridge writes one. */
export type PackagesAuditRow = {
  kind: string;
  outcome: "allowed" | "refused";
  subject: string;
  detail?: Record<string, unknown>;
};

/** The run under way for each home in this process: a start's and a merge's never install the same app at once. */
const runs = new Map<string, Promise<unknown>>();

/**
 * Installs what the list names, each outcome a bridge line and a security-log row, then starts
 * each of `startable` (the enabled apps, asked when the run begins) whose packages are in;
 * answers the outcomes. Run beside a start (not awaited) and by a merge restore (awaited), one
 * run after the other.
 */
export function installPendingPackages<A extends { name: string }>(
  paths: { home: string; apps: string },
  ctx: InstallerContext,
  reporting: { audit: (row: PackagesAuditRow) => Promise<void> },
  startable: readonly A[] | (() => Promise<readonly A[]>),
  start: (app: A) => Promise<unknown>,
): Promise<PackagesOutcome[]> {
  const run = (runs.get(paths.home) ?? Promise.resolve()).then(async () =>
    runPendingPackages(paths, ctx, reporting, typeof startable === "function" ? await startable() : startable, start),
  );
  runs.set(
    paths.home,
    run.catch(() => undefined),
  );
  return run;
}

async function runPendingPackages<A extends { name: string }>(
  paths: { home: string; apps: string },
  ctx: InstallerContext,
  reporting: { audit: (row: PackagesAuditRow) => Promise<void> },
  startable: readonly A[],
  start: (app: A) => Promise<unknown>,
): Promise<PackagesOutcome[]> {
  try {
    const outcomes = await restorePendingPackages(paths.home, paths.apps, ctx, async (outcome) => {
      ctx.log(
        outcome.ok
          ? `bridge: ${outcome.name}'s packages were installed again from its pinned closure`
          : `bridge: ${outcome.name}'s packages could not be installed again, it stays stopped: ${outcome.code} ${outcome.reason}`,
      );
      await reporting.audit({
        kind: outcome.ok ? "app_packages_restored" : "app_packages_restore_failed",
        outcome: outcome.ok ? "allowed" : "refused",
        subject: outcome.name,
        ...(outcome.ok ? {} : { detail: { code: outcome.code } }),
      });
    });
    const done = new Set(outcomes.filter((o) => o.ok).map((o) => o.name));
    await Promise.all(startable.filter((app) => done.has(app.name)).map(start));
    return outcomes;
  } catch (error) {
    ctx.log(`bridge: restoring packages failed: ${error instanceof Error ? error.message : String(error)}`);
    return [];
  }
}
