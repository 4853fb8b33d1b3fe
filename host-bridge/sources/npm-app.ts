// Turns a resolved npm package into an ordinary app folder: a generated app.json and the pinned
// npm-closure.json, nothing else. From there it is previewed, reviewed, consented to and
// installed like every app (one install path). The manifest grants the least a published MCP
// server needs: its own data/ (HOME and the XDG folders point inside it, so a server that writes
// ~/.something keeps it), no network, and one stdio server running the package's program with
// node from the pinned node_modules. The owner may add what a server needs on its command line
// (--env values, --folder needs the manifest declares, --arg arguments after the program), each
// shown in the review. The folder's bytes depend only on the closure and those choices, so
// resolving the same source again with the same flags gives the same consent digest.
import { createHash } from "node:crypto";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { posix } from "node:path";
import { join } from "node:path";
import { APP_NAME_PATTERN } from "../../kernel/rules/app-name";
import { GatewayError } from "../../kernel/contracts/errors";
import { FOLDER_NEED_PATTERN, folderInside, type FolderAccess } from "../../kernel/contracts/folder-grants";
import { NPM_CLOSURE_FILE, type NpmClosure } from "../../kernel/contracts/npm-closure";
import { DATA_PLACEHOLDER } from "../sandbox/server-env";
import { GENERATED_SOURCES_FOLDER } from "../install/registry-entry-file";

/** HOME and the XDG base folders inside data/: state a server keeps under ~ survives restarts and updates. */
export const DATA_HOME_ENV: Readonly<Record<string, string>> = {
  HOME: DATA_PLACEHOLDER,
  XDG_CONFIG_HOME: `${DATA_PLACEHOLDER}/.config`,
  XDG_DATA_HOME: `${DATA_PLACEHOLDER}/.local/share`,
  XDG_STATE_HOME: `${DATA_PLACEHOLDER}/.local/state`,
  XDG_CACHE_HOME: `${DATA_PLACEHOLDER}/.cache`,
};

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The app name an npm package becomes: its name without the scope, in kebab-case. */
export function appNameOfPackage(name: string): string {
  const bare = name.replace(/^@[^/]+\//, "");
  const kebab = bare
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 64)
    .replace(/-+$/, "");
  if (!APP_NAME_PATTERN.test(kebab))
    throw new GatewayError("npm_package_invalid", { vars: { package: name, reason: "no app name can be made of it" } });
  return kebab;
}

/** Parses `NAME=VALUE`; the value may hold ${DATA}. */
export function parseEnvAssignment(
  text: string,
): { ok: true; value: [string, string] } | { ok: false; reason: string } {
  const eq = text.indexOf("=");
  const name = eq < 0 ? text : text.slice(0, eq);
  if (eq < 0 || !ENV_NAME.test(name)) return { ok: false, reason: "is not NAME=VALUE (a variable name, then =)" };
  const value = text.slice(eq + 1);
  if (value.length > 4096) return { ok: false, reason: "has a value longer than 4096 characters" };
  return { ok: true, value: [name, value] };
}

/** A folder need the owner adds with `--folder NEED[:read|:read-write]` (read when no access is named). */
export interface FolderNeedChoice {
  name: string;
  access: FolderAccess;
}

/** Parses `NEED`, `NEED:read` or `NEED:read-write`. */
export function parseFolderNeed(text: string): { ok: true; value: FolderNeedChoice } | { ok: false; reason: string } {
  const colon = text.lastIndexOf(":");
  const name = colon < 0 ? text : text.slice(0, colon);
  const access = colon < 0 ? "read" : text.slice(colon + 1);
  if (!FOLDER_NEED_PATTERN.test(name))
    return { ok: false, reason: "does not start with a need's name (1 to 64 letters, digits, - or _)" };
  if (access !== "read" && access !== "read-write")
    return { ok: false, reason: "names no access: add :read or :read-write" };
  return { ok: true, value: { name, access } };
}

/** Checks one `--arg` value: the manifest's limit, and no NUL (an argument cannot hold one). */
export function parseServerArgument(text: string): { ok: true; value: string } | { ok: false; reason: string } {
  if (text.length > 4096) return { ok: false, reason: "is longer than 4096 characters" };
  if (text.includes("\0")) return { ok: false, reason: "holds a NUL character" };
  return { ok: true, value: text };
}

/** What the owner adds to a generated app on the `apps add` command line; the consent digest covers all of it. */
export interface OwnerChoices {
  /** --env NAME=VALUE: the server's variables, after the data/ ones. */
  env: ReadonlyArray<[string, string]>;
  /** --folder: the folder needs the manifest declares; the owner grants a folder to each later. */
  folders: readonly FolderNeedChoice[];
  /** --arg: arguments after the server's program, in order. */
  args: readonly string[];
  /** --user-config KEY=VALUE: an .mcpb bundle's non-sensitive user_config fields (mcpb-user-config.ts). */
  userConfig?: ReadonlyArray<[string, string]>;
}

export const NO_CHOICES: OwnerChoices = { env: [], folders: [], args: [] };

/**
 * The permissions and MCP server entry of a generated app: its own data/ (HOME and XDG_* in it),
 * no network, each --folder need with a reason naming `source`, and the program followed by the
 * owner's --arg values.
 */
export function generatedServer(
  source: string,
  command: { command: string; args: string[] },
  choices: OwnerChoices,
): { permissions: Record<string, unknown>; server: Record<string, unknown> } {
  const env: Record<string, string> = { ...DATA_HOME_ENV };
  for (const [key, value] of choices.env) env[key] = value;
  const folders = choices.folders.map(({ name, access }) => {
    const verb = access === "read-write" ? "reads and changes" : "reads";
    const why = `The MCP server of ${source} ${verb} the folder you grant here; it sees it at ${folderInside(name)}.`;
    return { name, why: why.slice(0, 500), access };
  });
  return {
    permissions: { storage: true, network: false, ...(folders.length > 0 ? { folders } : {}) },
    server: { command: command.command, args: [...command.args, ...choices.args], env },
  };
}

/** The program the package runs: its one bin, or the one named after the package. */
function programOf(closure: NpmClosure): string {
  const root = closure.packages.find((p) => p.path === `node_modules/${closure.root.name}`)!;
  const id = `${closure.root.name}@${closure.root.version}`;
  const bins = Object.entries(root.bin ?? {});
  const bare = closure.root.name.replace(/^@[^/]+\//, "");
  const chosen = bins.length === 1 ? bins[0] : bins.find(([name]) => name === bare);
  if (!chosen)
    throw new GatewayError("npm_package_invalid", {
      vars: {
        package: id,
        reason:
          bins.length === 0
            ? "it declares no program (package.json bin) to run as an MCP server"
            : `it declares several programs (${bins.map(([n]) => n).join(", ")}) and none is named after it`,
      },
    });
  const file = posix.normalize(chosen[1]);
  if (file.startsWith("/") || file === ".." || file.startsWith("../"))
    throw new GatewayError("npm_package_invalid", {
      vars: { package: id, reason: `its program ${chosen[1]} leaves the package` },
    });
  return `${root.path}/${file}`;
}

export interface GeneratedApp {
  name: string;
  manifest: Record<string, unknown>;
  /** Path inside the app folder (a `wheels/` file included) -> its text or bytes. */
  files: Record<string, string | Uint8Array>;
  /** Files written with the executable bit (0o755); every other file is 0o644. */
  executables?: readonly string[];
}

/** The generated app's files for a closure and what the owner added (--env, --folder, --arg). */
export function generateNpmApp(closure: NpmClosure, description: string | null, choices: OwnerChoices): GeneratedApp {
  const name = appNameOfPackage(closure.root.name);
  const source = `npm:${closure.root.name}@${closure.root.version}`;
  const { permissions, server } = generatedServer(source, { command: "node", args: [programOf(closure)] }, choices);
  const manifest: Record<string, unknown> = {
    name,
    version: closure.root.version,
    displayName: closure.root.name,
    description: (description ?? `The MCP server of ${source}`).slice(0, 500),
    permissions,
    dependencies: { npmClosure: true },
    mcpServers: { [name]: server },
  };
  return {
    name,
    manifest,
    files: {
      "app.json": `${JSON.stringify(manifest, null, 2)}\n`,
      [NPM_CLOSURE_FILE]: `${JSON.stringify(closure, null, 2)}\n`,
    },
  };
}

/**
 * Writes the generated app into `<quarantine>/sources/<content hash>` (written beside, then
 * renamed into place) and answers the folder. The same bytes always land in the same folder,
 * unless `tag` names a folder of the caller's own (`<content hash>-<tag>`), which no other
 * caller writes or removes.
 */
export async function writeGeneratedApp(quarantineRoot: string, app: GeneratedApp, tag?: string): Promise<string> {
  const hash = createHash("sha256");
  const executable = new Set(app.executables ?? []);
  // Sorted by path alone, and bytes hashed as bytes: a bundle's files are many and large.
  for (const path of Object.keys(app.files).sort()) {
    hash.update(`${path}\0${executable.has(path) ? "x" : "-"}\0`);
    hash.update(app.files[path]!);
    hash.update("\0");
  }
  const sources = join(quarantineRoot, GENERATED_SOURCES_FOLDER);
  const folder = join(sources, `${app.name}-${hash.digest("hex").slice(0, 16)}${tag === undefined ? "" : `-${tag}`}`);
  const building = `${folder}.${process.pid}.tmp`;
  await mkdir(sources, { recursive: true, mode: 0o700 });
  await rm(building, { recursive: true, force: true });
  await mkdir(building, { mode: 0o755 });
  for (const [path, text] of Object.entries(app.files)) {
    await mkdir(join(building, path, ".."), { recursive: true, mode: 0o755 });
    await writeFile(join(building, path), text, { mode: executable.has(path) ? 0o755 : 0o644 });
  }
  await rm(folder, { recursive: true, force: true });
  await rename(building, folder);
  return folder;
}
