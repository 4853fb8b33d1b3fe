// Installs an app's pinned npm closure (dependencies.npmClosure) into <appDir>/node_modules: the
// closure is read from the staged copy whose digest the owner consented to, rendered as a
// lockfile, and `npm ci` installs exactly that tree in the sandbox, with no install script run,
// reaching only the closure's own registry. npm refuses a tarball whose bytes differ from its
// pinned integrity; that refusal is answered with a code naming the package.
import { lstat, mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { GatewayError } from "../../kernel/contracts/errors";
import type { AppManifest } from "../../kernel/contracts/manifest";
import { NPM_CLOSURE_FILE, type NpmClosure } from "../../kernel/contracts/npm-closure";
import { parseHostPattern, type HostPattern } from "../../kernel/rules/network-grant";
import { closureLockfile, closurePackageJson, packageWithIntegrity } from "../sources/npm-lockfile";
import {
  installerRun,
  moveInstalled,
  npmCli,
  NPM_CLOSURE_CACHE,
  NPM_FETCH_RETRIES,
  NPM_PREFIX,
  type InstallerContext,
} from "./install-dependencies";
import { parseNpmClosure } from "./npm-closure-file";

/** The one host the installer may reach: the registry the closure was pinned from. */
export function registryGrant(registry: string): HostPattern[] {
  const url = new URL(registry);
  const port = url.port !== "" ? url.port : url.protocol === "https:" ? "443" : "80";
  const pattern = parseHostPattern(`${url.hostname}:${port}`);
  return "error" in pattern ? [] : [pattern];
}

/** The largest npm debug log read back; npm's own log of a failed ci is a few hundred KiB at most. */
const MAX_LOG_BYTES = 4 * 1024 * 1024;

/**
 * The pinned integrity npm said it did not get (EINTEGRITY). Read from npm's own debug log, which
 * it writes into the prefix: the lines relayed from the child are masked, and an integrity looks
 * like a credential to the masker. Only plain files npm wrote there are read.
 */
async function refusedIntegrity(
  logsDir: string,
  lines: readonly string[],
): Promise<{ refused: boolean; integrity: string | null }> {
  let text = lines.join("\n");
  for (const name of await readdir(logsDir).catch(() => [] as string[])) {
    const path = join(logsDir, name);
    const info = await lstat(path).catch(() => null);
    if (info?.isFile() && info.size <= MAX_LOG_BYTES) text += `\n${await readFile(path, "utf8").catch(() => "")}`;
  }
  const refused = /EINTEGRITY|integrity checksum failed/.test(text);
  const wanted = /wanted (sha512-[A-Za-z0-9+/]{86}==)/.exec(text);
  return { refused, integrity: wanted ? wanted[1]! : null };
}

/** Reads the consented closure from the staged folder; a closure that does not parse was never reviewed. */
export async function stagedClosure(stagedDir: string): Promise<NpmClosure> {
  const read = parseNpmClosure(await readFile(join(stagedDir, NPM_CLOSURE_FILE), "utf8"));
  if (!read.ok) throw new GatewayError(read.code, { message: read.message, detail: { step: "npm_closure" } });
  return read.closure;
}

/** Installs the closure into <appDir>/node_modules; throws a GatewayError naming the step or the package. */
export async function installNpmClosure(app: string, appDir: string, ctx: InstallerContext): Promise<void> {
  const closure = await stagedClosure(appDir);
  const failed = (reason: string) =>
    new GatewayError("install_step_failed", { vars: { step: "npm_closure", reason }, detail: { step: "npm_closure" } });
  const cli = npmCli(ctx.parentEnv.PATH);
  if (!cli) throw failed("npm was not found beside node or on PATH");
  // npm works in a prefix the bridge makes (never the bundle's own package.json), holding only
  // the two files rendered from the consented closure; what it installs then moves into node_modules/.
  const modules = join(appDir, "node_modules");
  const prefix = join(modules, NPM_PREFIX);
  await rm(prefix, { recursive: true, force: true });
  await mkdir(prefix, { recursive: true, mode: 0o755 });
  await writeFile(join(prefix, "package.json"), closurePackageJson(closure), { mode: 0o644 });
  await writeFile(join(prefix, "package-lock.json"), closureLockfile(closure), { mode: 0o644 });
  const args = [
    cli,
    "ci",
    "--ignore-scripts",
    "--no-audit",
    "--no-fund",
    "--no-update-notifier",
    "--install-links",
    "--registry",
    closure.registry,
    // The lockfile's URLs are fetched as written, never moved to another host.
    "--replace-registry-host",
    "never",
    ...NPM_FETCH_RETRIES,
    // The tarballs stay in the app's own cache (only this app's installer writes it), and a
    // tarball already there is used without asking the registry: npm checks its integrity
    // either way, so a restore from an archive that carried them needs no network.
    "--cache",
    join(modules, NPM_CLOSURE_CACHE),
    "--prefer-offline",
    "--logs-dir",
    join(prefix, "logs"),
    "--prefix",
    prefix,
  ];
  try {
    const result = await installerRun(
      app,
      appDir,
      process.execPath,
      args,
      modules,
      registryGrant(closure.registry),
      ctx,
    );
    if (!result.ok) {
      const integrity = await refusedIntegrity(join(prefix, "logs"), result.lastLines ?? []);
      if (integrity.refused) {
        const named = integrity.integrity ? packageWithIntegrity(closure, integrity.integrity) : null;
        throw new GatewayError("npm_integrity_mismatch", {
          vars: { package: named ?? "(one of the pinned packages)", integrity: integrity.integrity ?? "its pin" },
          detail: { step: "npm_closure", package: named, integrity: integrity.integrity },
        });
      }
      throw failed(result.reason);
    }
    await moveInstalled(join(prefix, "node_modules"), modules);
  } finally {
    await rm(prefix, { recursive: true, force: true });
  }
}

/**
 * The npm_closure step of an install and of an update, the one place both call: an app that
 * pins a closure gets it installed into the staged copy (an update's new copy starts without
 * node_modules, so skipping it would leave its servers nothing to run), any other app skips it.
 */
export async function npmClosureStep(
  app: string,
  stagedDir: string,
  manifest: AppManifest,
  ctx: InstallerContext,
  note: (step: "npm_closure", status: "started" | "done" | "failed" | "skipped", message?: string) => Promise<void>,
): Promise<void> {
  if (manifest.dependencies?.npmClosure !== true) return note("npm_closure", "skipped");
  await note("npm_closure", "started");
  await installNpmClosure(app, stagedDir, ctx).catch(async (error: unknown) => {
    await note("npm_closure", "failed", error instanceof Error ? error.message : String(error));
    throw error;
  });
  await note("npm_closure", "done");
}
