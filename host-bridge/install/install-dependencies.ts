// Installs an app's declared packages into its own folder, from the allowlisted environment:
// Python packages into <app>/venv (made without pip, filled by the host's pip with --python),
// npm packages with --ignore-scripts so no package runs code at install time.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { buildChildEnv } from "../sandbox/child-env";

export interface InstallerContext {
  home: string;
  parentEnv: Readonly<Record<string, string | undefined>>;
  passthrough: readonly string[];
  log: (line: string) => void;
}

export type StepResult = { ok: true } | { ok: false; exitCode: number | null; timedOut: boolean; reason: string };

const INSTALL_TIMEOUT_MS = 10 * 60 * 1000;

function installerEnv(app: string, appDir: string, ctx: InstallerContext): Record<string, string> {
  return buildChildEnv(ctx.parentEnv, {
    kind: "installer",
    app: { name: app, hasStorage: false, dataDir: join(appDir, "data") },
    home: ctx.home,
    passthrough: ctx.passthrough,
    log: ctx.log,
  }).env;
}

async function run(file: string, args: string[], cwd: string, env: Record<string, string>, log: (line: string) => void): Promise<StepResult> {
  const result = await execa(file, args, { cwd, env, extendEnv: false, reject: false, stdin: "ignore", timeout: INSTALL_TIMEOUT_MS, all: true });
  const output = String(result.all ?? "").split("\n").filter(Boolean);
  for (const line of output.slice(-20)) log(line);
  if (result.exitCode === 0) return { ok: true };
  return { ok: false, exitCode: result.exitCode ?? null, timedOut: Boolean(result.timedOut), reason: output.slice(-3).join(" / ") || `exit status ${result.exitCode}` };
}

/** The interpreter an app's Python backend runs with. */
export function venvPython(appDir: string): string {
  return join(appDir, "venv", "bin", "python");
}

/**
 * Creates <appDir>/venv and installs `requirements` into it. An app that ships a `wheels/`
 * folder installs from it alone (`--no-index`): offline and exactly the files reviewed.
 * Requirement strings were already screened (no options, no URLs); `--` ends pip's options.
 */
export async function installPythonDependencies(app: string, appDir: string, requirements: readonly string[], ctx: InstallerContext): Promise<StepResult> {
  const env = installerEnv(app, appDir, ctx);
  const venv = await run("python3", ["-m", "venv", "--without-pip", join(appDir, "venv")], appDir, env, ctx.log);
  if (!venv.ok) return venv;
  const wheels = join(appDir, "wheels");
  const source = existsSync(wheels) ? ["--no-index", "--find-links", wheels] : [];
  return run("python3", ["-m", "pip", "--python", venvPython(appDir), "install", "--disable-pip-version-check", "--no-input", ...source, "--", ...requirements], appDir, env, ctx.log);
}

/** Installs npm packages into <appDir>/node_modules without running any package's scripts. */
export async function installNpmPackages(app: string, appDir: string, packages: readonly string[], ctx: InstallerContext): Promise<StepResult> {
  const env = installerEnv(app, appDir, ctx);
  return run("npm", ["install", "--ignore-scripts", "--no-audit", "--no-fund", "--no-save", "--prefix", appDir, "--", ...packages], appDir, env, ctx.log);
}
