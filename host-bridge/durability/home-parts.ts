// What of a home goes into a backup, as a list of parts to seal (docs/backup-and-restore.md,
// "What an archive holds"). Each app's data/ is first copied through copyAppData — every SQLite
// database through the online backup API, one file with no -wal or -shm — into a staging folder
// no app sees, and read from there. Installed packages (venv/, and node_modules/ where npm made
// it), quarantine, rollback copies, parked data, journals, logs and runtime files are left out:
// the first are rebuilt from the pinned closure (whose npm tarballs, kept in node_modules/
// .personalclaw-npm-cache/, are carried), the rest are this machine's, not the owner's.
import { constants } from "node:fs";
import { lstat, open, readdir } from "node:fs/promises";
import { join, relative } from "node:path";
import { APP_NAME_PATTERN } from "../../kernel/rules/app-name";
import { AppManifestSchema } from "../../kernel/contracts/manifest";
import { NPM_CLOSURE_FILE } from "../../kernel/contracts/npm-closure";
import { copyAppData } from "../install/copy-app-data";
import { NPM_CLOSURE_CACHE } from "../install/install-dependencies";
import type { PartKind } from "./archive-format";

/** The owner's files at the top of the home that a backup keeps (secrets/ is walked as well). */
export const HOME_FILES = [
  "config.json",
  "mcp.json",
  "secrets.key",
  "sel_seed.sealed",
  "sel_witness.json",
  "sel_hmac.key",
];
export const HOME_FOLDERS = ["secrets"];

/** One file to seal: from `source` on disk, or `bytes` held in memory (a Durable Object's export). */
export interface PlannedPart {
  path: string;
  kind: PartKind;
  app?: string;
  mode: number;
  source?: string;
  bytes?: Buffer;
}

export interface PlannedApp {
  name: string;
  digest: string | null;
  packages: string[];
}

export interface PlannedFolder {
  path: string;
  mode: number;
}

export interface HomePlan {
  parts: PlannedPart[];
  folders: PlannedFolder[];
  skipped: string[];
  apps: PlannedApp[];
}

interface Found {
  files: Array<{ abs: string; rel: string; mode: number }>;
  folders: PlannedFolder[];
  skipped: string[];
}

function found(): Found {
  return { files: [], folders: [], skipped: [] };
}

async function modeOf(path: string): Promise<number> {
  return (await lstat(path)).mode & 0o777;
}

/** Regular files under `root`, never through a link; links, sockets and the like are named in `skipped`. */
async function walkFiles(root: string, base: string, leaveOut: (rel: string) => boolean, out: Found): Promise<void> {
  const entries = (await readdir(root)).sort();
  for (const entry of entries) {
    const abs = join(root, entry);
    const rel = relative(base, abs);
    if (leaveOut(rel)) continue;
    const st = await lstat(abs);
    if (st.isDirectory()) {
      out.folders.push({ path: rel, mode: st.mode & 0o777 });
      await walkFiles(abs, base, leaveOut, out);
    } else if (st.isFile()) out.files.push({ abs, rel, mode: st.mode & 0o777 });
    else out.skipped.push(rel);
  }
}

async function exists(path: string): Promise<boolean> {
  return (await lstat(path).catch(() => null)) !== null;
}

/** The packages an install fetched for the app (rebuilt at restore); empty when it fetched none. */
async function packagesOf(appDir: string): Promise<{ packages: string[]; npmInstalled: boolean }> {
  let manifest;
  try {
    const fh = await open(join(appDir, "app.json"), constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      manifest = AppManifestSchema.safeParse(JSON.parse(await fh.readFile("utf8")));
    } finally {
      await fh.close();
    }
  } catch {
    return { packages: [], npmInstalled: false };
  }
  const deps = manifest.success ? manifest.data.dependencies : undefined;
  const packages = [
    ...(deps?.pythonDependencies ?? []).map((p) => `python:${p}`),
    ...(deps?.npmPackages ?? []).map((p) => `npm:${p}`),
  ];
  const closure = await exists(join(appDir, NPM_CLOSURE_FILE));
  if (closure) packages.push(`npm-closure:${NPM_CLOSURE_FILE}`);
  return { packages, npmInstalled: (deps?.npmPackages ?? []).length > 0 || closure };
}

/** One app: its installed bytes without packages or data/, then a consistent copy of data/. */
async function planApp(
  home: string,
  name: string,
  staging: string,
  plan: HomePlan,
  digest: string | null,
): Promise<void> {
  const appDir = join(home, "apps", name);
  const { packages, npmInstalled } = await packagesOf(appDir);
  plan.apps.push({ name, digest, packages });
  const leaveOut = (rel: string) => {
    const [top, second] = rel.split("/");
    if (top === "data" || top === "venv") return true;
    // What npm installed is rebuilt at restore; the closure's tarballs it kept are carried for that.
    return npmInstalled && top === "node_modules" && second !== undefined && second !== NPM_CLOSURE_CACHE;
  };
  const bytes = found();
  await walkFiles(appDir, appDir, leaveOut, bytes);
  plan.folders.push(
    { path: `apps/${name}`, mode: await modeOf(appDir) },
    ...bytes.folders.map((f) => ({ path: `apps/${name}/${f.path}`, mode: f.mode })),
  );
  plan.skipped.push(...bytes.skipped.map((f) => `apps/${name}/${f}`));
  for (const file of bytes.files)
    plan.parts.push({
      path: `apps/${name}/${file.rel}`,
      kind: "app-file",
      app: name,
      mode: file.mode,
      source: file.abs,
    });
  if (!(await exists(join(appDir, "data")))) return;
  const copy = join(staging, name);
  const report = await copyAppData(join(appDir, "data"), copy);
  plan.skipped.push(...report.skipped.map((f) => `apps/${name}/data/${f}`));
  const data = found();
  await walkFiles(copy, copy, () => false, data);
  plan.folders.push(
    { path: `apps/${name}/data`, mode: await modeOf(join(appDir, "data")) },
    ...data.folders.map((f) => ({ path: `apps/${name}/data/${f.path}`, mode: f.mode })),
  );
  // A link in data/ is recreated by an update's copy; an archive does not carry links.
  plan.skipped.push(...data.skipped.map((f) => `apps/${name}/data/${f}`));
  for (const file of data.files)
    plan.parts.push({
      path: `apps/${name}/data/${file.rel}`,
      kind: "app-data",
      app: name,
      mode: file.mode,
      source: file.abs,
    });
}

/**
 * Plans the parts of `home`: the owner's files, then every installed app (`digests` names each
 * app's consent digest as the gateway records it). Data copies are made under `staging`.
 */
export async function planHomeParts(
  home: string,
  staging: string,
  digests: ReadonlyMap<string, string>,
): Promise<HomePlan> {
  const plan: HomePlan = { parts: [], folders: [], skipped: [], apps: [] };
  for (const file of HOME_FILES) {
    const st = await lstat(join(home, file)).catch(() => null);
    if (st?.isFile())
      plan.parts.push({ path: file, kind: "home-file", mode: st.mode & 0o777, source: join(home, file) });
  }
  for (const folder of HOME_FOLDERS) {
    if (!(await exists(join(home, folder)))) continue;
    const secrets = found();
    await walkFiles(join(home, folder), home, () => false, secrets);
    plan.folders.push({ path: folder, mode: await modeOf(join(home, folder)) }, ...secrets.folders);
    plan.skipped.push(...secrets.skipped);
    for (const file of secrets.files)
      plan.parts.push({ path: file.rel, kind: "home-file", mode: file.mode, source: file.abs });
  }
  const appsDir = join(home, "apps");
  const names = (await exists(appsDir)) ? (await readdir(appsDir)).filter((n) => APP_NAME_PATTERN.test(n)).sort() : [];
  for (const name of names) {
    const st = await lstat(join(appsDir, name));
    if (!st.isDirectory()) continue;
    await planApp(home, name, staging, plan, digests.get(name) ?? null);
  }
  return plan;
}
