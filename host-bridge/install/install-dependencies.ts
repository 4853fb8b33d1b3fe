// Installs an app's declared packages into its own folder, confined like every app child:
// the bundle is never the working directory (a `venv.py` or `pip/` in it would shadow the
// module the installer runs), Python runs in isolated mode, pip takes wheels only (a source
// archive would run the bundle's own build backend), npm runs no package's scripts, and each
// installer may write only the one folder it fills.
import { existsSync, realpathSync } from "node:fs";
import { lstat, mkdir, readdir, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { findOnPath, realPython } from "../sandbox/interpreter";
import { runConfined, type ConfinementContext } from "../sandbox/run-confined";
import { grantPatterns, type HostPattern } from "../../kernel/rules/network-grant";

export type InstallerContext = ConfinementContext;

export type StepResult =
  { ok: true } | { ok: false; exitCode: number | null; timedOut: boolean; reason: string; lastLines?: string[] };

const INSTALL_TIMEOUT_MS = 10 * 60 * 1000;

/** The interpreter an app's Python backend runs with. */
export function venvPython(appDir: string): string {
  return join(appDir, "venv", "bin", "python");
}

/** The hosts an installer reaches while it fetches from its registry, and no others. */
const PYPI = grantPatterns(["pypi.org", "files.pythonhosted.org"]);
const NPM_REGISTRY = grantPatterns(["registry.npmjs.org"]);

/** Runs one installer step confined: it may write only `output`, and reach only `egress`. */
export async function installerRun(
  app: string,
  appDir: string,
  file: string,
  args: string[],
  output: string,
  egress: readonly HostPattern[],
  ctx: InstallerContext,
): Promise<StepResult> {
  await mkdir(output, { recursive: true, mode: 0o755 }); // bwrap binds only a folder that exists
  const result = await runConfined(
    {
      kind: "installer",
      app: { name: app, appDir, dataDir: join(appDir, "data"), hasStorage: false },
      command: { file, args },
      cwd: "/tmp",
      writable: [output],
      egress,
      timeoutMs: INSTALL_TIMEOUT_MS,
      tag: `app ${app} installer`,
    },
    ctx,
  );
  if (result.ok) return { ok: true };
  const tail = result.lastLines.slice(-3).join(" / ");
  // An address the egress rules refused is the cause; the installer's own words for it ("403
  // Forbidden", "security policy", "connection refused") come after it.
  const refused = result.egressRefused?.length
    ? `the egress rules refused ${result.egressRefused.join("; ")}, which it tried to reach; `
    : "";
  return {
    ok: false,
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    reason: `${refused}${tail ? `${result.reason}: ${tail}` : result.reason}`,
    lastLines: result.lastLines,
  };
}

/**
 * Creates <appDir>/venv and installs `requirements` into it, wheels only. An app that ships a
 * `wheels/` folder installs from it alone (`--no-index`, no network): offline and exactly the
 * files reviewed. Requirement strings were already screened (no options, no URLs); `--` ends
 * pip's options.
 */
export async function installPythonDependencies(
  app: string,
  appDir: string,
  requirements: readonly string[],
  ctx: InstallerContext,
): Promise<StepResult> {
  const python = realPython(ctx.parentEnv.PATH);
  if (!python) return { ok: false, exitCode: null, timedOut: false, reason: "python3 was not found on PATH" };
  const venv = join(appDir, "venv");
  const made = await installerRun(app, appDir, python, ["-I", "-m", "venv", "--without-pip", venv], venv, [], ctx);
  if (!made.ok) return made;
  const wheels = join(appDir, "wheels");
  const offline = existsSync(wheels);
  const source = offline ? ["--no-index", "--find-links", wheels] : [];
  const pip = [
    "-I",
    "-m",
    "pip",
    "--python",
    venvPython(appDir),
    "install",
    "--disable-pip-version-check",
    "--no-input",
    "--no-cache-dir",
    "--only-binary",
    ":all:",
    ...source,
    "--",
    ...requirements,
  ];
  return installerRun(app, appDir, python, pip, venv, offline ? [] : PYPI, ctx);
}

/**
 * npm's network retries, bounded for an owner who is waiting: a fetch that fails is tried twice
 * more, after 1 s and then 4 s. npm's own waits are 10 s and then 60 s, and it fetches a tarball
 * that fails its integrity twice over, so a tarball that never matches its pin, or a registry
 * that is gone, was refused only after more than two minutes.
 */
export const NPM_FETCH_RETRIES = [
  "--fetch-retries",
  "2",
  "--fetch-retry-mintimeout",
  "1000",
  "--fetch-retry-maxtimeout",
  "4000",
] as const;

/** npm's own script: the copy beside the bridge's node, else the one `npm` on PATH points to. */
export function npmCli(pathEnv: string | undefined): string | undefined {
  const beside = join(dirname(realpathSync(process.execPath)), "..", "lib", "node_modules", "npm", "bin", "npm-cli.js");
  if (existsSync(beside)) return beside;
  const onPath = findOnPath("npm", pathEnv);
  return onPath ? realpathSync(onPath) : undefined;
}

/** Installs npm packages into <appDir>/node_modules without running any package's scripts. */
export async function installNpmPackages(
  app: string,
  appDir: string,
  packages: readonly string[],
  ctx: InstallerContext,
): Promise<StepResult> {
  const cli = npmCli(ctx.parentEnv.PATH);
  if (!cli) return { ok: false, exitCode: null, timedOut: false, reason: "npm was not found beside node or on PATH" };
  // npm installs what the prefix's package.json lists besides the names it is given: the
  // bundle's own package.json would bring in dependencies the review never listed (a shipped
  // tarball, a registry name). So npm works in a prefix the bridge makes, whose package.json
  // lists nothing, and what it installed then moves into the app's node_modules/.
  const modules = join(appDir, "node_modules");
  const prefix = join(modules, NPM_PREFIX);
  await rm(prefix, { recursive: true, force: true });
  await mkdir(prefix, { recursive: true, mode: 0o755 });
  await writeFile(join(prefix, "package.json"), '{ "private": true }\n', { mode: 0o644 });
  const args = [
    cli,
    "install",
    "--ignore-scripts",
    "--no-audit",
    "--no-fund",
    "--no-save",
    "--no-package-lock",
    // A package is copied in, never linked: a link would name where npm ran, not node_modules/.
    "--install-links",
    ...NPM_FETCH_RETRIES,
    "--cache",
    "/tmp/npm-cache",
    "--prefix",
    prefix,
    "--",
    ...packages,
  ];
  try {
    const result = await installerRun(app, appDir, process.execPath, args, modules, NPM_REGISTRY, ctx);
    if (!result.ok) return result;
    await moveInstalled(join(prefix, "node_modules"), modules);
    return result;
  } finally {
    await rm(prefix, { recursive: true, force: true });
  }
}

/** The folder inside node_modules/ where npm runs (a dot name: no package is called that). */
export const NPM_PREFIX = ".personalclaw-npm";

/**
 * npm's cache for an app's pinned closure, kept inside its node_modules/: the tarballs it
 * fetched, stored by their integrity, which a backup carries so that a restore installs the
 * same closure without a registry (docs/backup-and-restore.md, "Packages").
 */
export const NPM_CLOSURE_CACHE = ".personalclaw-npm-cache";

/**
 * Moves what npm installed into node_modules/: a package replaces its namesake, and a folder
 * that holds several (a scope's `@name`, `.bin`) is merged entry by entry, so a package the
 * bundle ships beside them stays. npm's record of the tree it made (`.package-lock.json`) stays
 * behind.
 */
export async function moveInstalled(from: string, to: string, grouped = false): Promise<void> {
  for (const name of await readdir(from).catch(() => [] as string[])) {
    if (!grouped && name === ".package-lock.json") continue;
    if (!grouped && (name === ".bin" || name.startsWith("@"))) {
      // Merged only into a real folder: anything else of that name is replaced.
      if (!(await lstat(join(to, name)).catch(() => null))?.isDirectory())
        await rm(join(to, name), { recursive: true, force: true });
      await mkdir(join(to, name), { recursive: true, mode: 0o755 });
      await moveInstalled(join(from, name), join(to, name), true);
      continue;
    }
    await rm(join(to, name), { recursive: true, force: true });
    await rename(join(from, name), join(to, name));
  }
}
