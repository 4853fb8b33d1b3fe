// Turns an .mcpb bundle into an ordinary app folder: the bundle's files (its node_modules or
// server/lib included, staged and scanned like any bundle's), a generated app.json and
// mcpb-bundle.json, the record of the bundle (its sha256, author, version, compatibility,
// signature state and what became of each user_config field), which the review shows and the
// consent digest covers. From there it is previewed, consented to and installed like every app.
//
// The server runs in the app sandbox with its working directory in the app folder, so
// `${__dirname}` becomes `.`; HOME and XDG_* point inside data/ (DATA_HOME_ENV); no network. A
// `${user_config.KEY}` becomes: for a `directory` field, a folder need the owner grants a folder
// to (`/folders/<need>` inside); for another field, its default; an optional field with none is
// left unset. What cannot be given to a confined server is refused by name: a `file` field (a
// folder is granted, never one file), a required sensitive field (an MCP server is given no
// secrets), a required field without a default, and the owner's own folders (${DESKTOP}...).
import { createHash } from "node:crypto";
import { posix } from "node:path";
import { GatewayError } from "../../kernel/contracts/errors";
import { folderInside, FOLDER_NEED_PATTERN } from "../../kernel/contracts/folder-grants";
import { MCPB_BUNDLE_FILE, type McpbBundleRecord } from "../../kernel/contracts/mcpb-bundle";
import { DATA_PLACEHOLDER } from "../sandbox/server-env";
import { MCPB_CAPS, readMcpbArchive, type McpbCaps, type McpbFile } from "./mcpb-archive";
import { parseMcpbManifest, type McpbManifest, type McpbUserConfigOption } from "./mcpb-manifest";
import { appNameOfPackage, DATA_HOME_ENV, type GeneratedApp } from "./npm-app";

/** Names at the top of the app folder that the generated app, the install or data/ own. */
const RESERVED_AT_TOP = new Set(["app.json", MCPB_BUNDLE_FILE, "installed.json", "npm-closure.json", "data"]);

const USER_CONFIG = /\$\{user_config\.([^}]*)\}/g;
const WHOLE_USER_CONFIG = /^\$\{user_config\.([^}]*)\}$/;

type McpConfig = { command: string; args: string[]; env: Record<string, string> };
/** A field's value in the server's command line: a text, or nothing (an optional field left unset). */
type Resolved = { value: string | null; becomes: string };
type FolderNeed = { name: string; why: string; access: "read-write" };

const manifestInvalid = (reason: string) => new GatewayError("mcpb_manifest_invalid", { vars: { reason } });
const configRefused = (field: string, reason: string) =>
  new GatewayError("mcpb_user_config_refused", { vars: { field, reason } });

/** The server's command line as the bundle gives it for Linux: mcp_config with its `linux` override, or the type's default. */
function mcpConfigOf(manifest: McpbManifest): McpConfig {
  const server = manifest.server;
  const base = server.mcp_config;
  if (base === undefined) {
    const entry = `./${server.entry_point}`;
    if (server.type === "node") return { command: "node", args: [entry], env: {} };
    if (server.type === "python") return { command: "python3", args: [entry], env: {} };
    return { command: entry, args: [], env: {} };
  }
  const linux = base.platform_overrides?.linux;
  return {
    command: linux?.command ?? base.command,
    args: [...(linux?.args ?? base.args ?? [])],
    env: { ...(linux?.env ?? base.env ?? {}) },
  };
}

/** The user_config keys the command line names. */
function namedKeys(config: McpConfig): Set<string> {
  const keys = new Set<string>();
  for (const text of [config.command, ...config.args, ...Object.values(config.env)])
    for (const match of text.matchAll(USER_CONFIG)) keys.add(match[1]!);
  return keys;
}

/** The folder need a directory field becomes: its key in the need pattern's letters. */
function needNameOf(key: string): string {
  const name = key.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64);
  if (!FOLDER_NEED_PATTERN.test(name)) throw configRefused(key, "no folder need name can be made of its key");
  return name;
}

function defaultText(value: NonNullable<McpbUserConfigOption["default"]>): string {
  return Array.isArray(value) ? value.join(",") : String(value);
}

/** What one named field becomes; a field that cannot reach a confined server is refused with the reason. */
function resolveField(key: string, option: McpbUserConfigOption, needs: FolderNeed[]): Resolved {
  const required = option.required === true;
  if (option.type === "directory") {
    const need = needNameOf(key);
    if (needs.some((n) => n.name === need)) throw configRefused(key, `its folder need '${need}' is named twice`);
    needs.push({
      name: need,
      why: `${option.title}: ${option.description}`.slice(0, 500) || key,
      access: "read-write",
    });
    return {
      value: folderInside(need),
      becomes: `the folder need '${need}': the folder you grant it (apps folders), seen at ${folderInside(need)}`,
    };
  }
  if (option.type === "file")
    throw configRefused(key, "it asks for one file, and PersonalClaw grants folders, never a single file");
  if (option.sensitive === true) {
    if (required) throw configRefused(key, "it is sensitive and required, and an MCP server is given no secrets");
    return { value: null, becomes: "left unset: it is sensitive, and an MCP server is given no secrets" };
  }
  if (option.default !== undefined && !(Array.isArray(option.default) && option.default.length === 0)) {
    const value = defaultText(option.default);
    if (/\$\{/.test(value)) throw configRefused(key, "its default names a folder of yours (${...})");
    return { value, becomes: `${JSON.stringify(value)}, its default` };
  }
  if (required) throw configRefused(key, "it is required and has no default");
  return { value: null, becomes: "left unset: it is optional and has no default" };
}

/** Every declared field with what it becomes; the values of the named ones. */
function resolveUserConfig(
  manifest: McpbManifest,
  named: ReadonlySet<string>,
): { values: Map<string, Resolved>; needs: FolderNeed[]; uses: McpbBundleRecord["userConfig"] } {
  const declared = manifest.user_config ?? {};
  for (const key of named)
    if (!(key in declared)) throw configRefused(key, "mcp_config names it and no field declares it");
  const values = new Map<string, Resolved>();
  const needs: FolderNeed[] = [];
  const uses: McpbBundleRecord["userConfig"] = [];
  for (const [key, option] of Object.entries(declared).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const resolved = named.has(key) ? resolveField(key, option, needs) : null;
    if (resolved) values.set(key, resolved);
    uses.push({
      key,
      type: `${option.type}${option.sensitive ? ", sensitive" : ""}${option.required ? ", required" : ""}`,
      title: option.title.slice(0, 500),
      becomes: resolved?.becomes ?? "not used: the server's command line does not name it",
    });
  }
  return { values, needs, uses };
}

/** One text of the command line with every variable replaced; `where` says whether ${HOME} may become ${DATA}. */
function substituteText(text: string, values: ReadonlyMap<string, Resolved>, where: "env" | "command line"): string {
  return text.replace(/\$\{([^}]*)\}/g, (whole, name: string) => {
    if (name === "__dirname") return ".";
    if (name === "pathSeparator" || name === "/") return "/";
    if (name.startsWith("user_config.")) return values.get(name.slice("user_config.".length))?.value ?? "";
    if (name === "HOME" && where === "env") return DATA_PLACEHOLDER;
    if (["HOME", "DESKTOP", "DOCUMENTS", "DOWNLOADS"].includes(name))
      throw manifestInvalid(`its ${where} names \${${name}}, a folder of yours the server does not see`);
    return whole;
  });
}

/** The command line with its variables replaced: an argument or variable that is exactly an unset field is left out. */
function substitute(config: McpConfig, values: ReadonlyMap<string, Resolved>): McpConfig {
  const unset = (text: string) => {
    const whole = WHOLE_USER_CONFIG.exec(text);
    return whole !== null && values.get(whole[1]!)?.value === null;
  };
  const command = substituteText(config.command, values, "command line");
  if (command === "") throw manifestInvalid("its command is empty once its variables are replaced");
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(config.env))
    if (!unset(value)) env[name] = substituteText(value, values, "env");
  return {
    // python is python3 here: the sandbox's interpreter has no `python` name on most systems.
    command: command === "python" ? "python3" : command,
    args: config.args.filter((arg) => !unset(arg)).map((arg) => substituteText(arg, values, "command line")),
    env,
  };
}

/** A file of the bundle named by `path` (`./x`, `x`), or null. */
function bundleFile(files: readonly McpbFile[], path: string): McpbFile | null {
  const normal = posix.normalize(path);
  return files.find((f) => f.path === normal) ?? null;
}

/** The compatibility it declares, as `key: value` lines; one that excludes Linux is refused. */
function compatibilityLines(manifest: McpbManifest): string[] {
  const compatibility = manifest.compatibility ?? {};
  const platforms = compatibility.platforms;
  if (platforms !== undefined && !platforms.includes("linux"))
    throw manifestInvalid(`it declares the platforms ${platforms.join(", ") || "(none)"}, and not linux`);
  const lines: string[] = [];
  for (const [key, value] of Object.entries(compatibility).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (key === "runtimes" && value && typeof value === "object")
      for (const [runtime, range] of Object.entries(value)) lines.push(`runtimes.${runtime}: ${String(range)}`);
    else lines.push(`${key}: ${Array.isArray(value) ? value.join(", ") : JSON.stringify(value)}`);
  }
  return lines.map((line) => line.slice(0, 500)).slice(0, 64);
}

/** The bundle's files, each checked against the names the generated app owns. */
function bundleFiles(files: readonly McpbFile[]): Record<string, Buffer> {
  const out: Record<string, Buffer> = {};
  for (const file of files) {
    if (RESERVED_AT_TOP.has(file.path.split("/")[0]!.toLowerCase()))
      throw new GatewayError("mcpb_entry_refused", {
        vars: { path: file.path, reason: "that name at the top belongs to the generated app or its data/" },
      });
    out[file.path] = file.bytes;
  }
  return out;
}

export interface McpbSource {
  /** The path or URL as the owner gave it (shown in the review). */
  source: string;
  /** The whole .mcpb file as read once: what is hashed is what is unpacked. */
  bytes: Buffer;
}

/** What the owner adds on the `apps add` command line: variables, folder needs, arguments after the bundle's. */
export interface McpbOwnerChoices {
  env: ReadonlyArray<[string, string]>;
  folders?: ReadonlyArray<{ name: string; access: "read" | "read-write" }>;
  args?: readonly string[];
}

/** The bundle's folder needs and the owner's --folder ones; a name both use is refused. */
function folderNeeds(needs: readonly FolderNeed[], choices: McpbOwnerChoices, source: string) {
  const all: Array<{ name: string; why: string; access: "read" | "read-write" }> = [...needs];
  for (const { name, access } of choices.folders ?? []) {
    if (all.some((need) => need.name === name))
      throw configRefused(name, "the bundle's own folder need has that name: leave out --folder " + name);
    all.push({ name, why: `A folder you add for the MCP server of ${source}, seen at ${folderInside(name)}.`, access });
  }
  return all;
}

/** The generated app of one bundle and the owner's choices; throws a GatewayError naming what is refused. */
export async function generateMcpbApp(
  bundle: McpbSource,
  choices: McpbOwnerChoices,
  caps: McpbCaps = MCPB_CAPS,
): Promise<GeneratedApp & { record: McpbBundleRecord }> {
  const archive = await readMcpbArchive(bundle.bytes, caps);
  const manifest = parseMcpbManifest(archive.files.find((f) => f.path === "manifest.json")?.bytes);
  const type = manifest.server.type;
  if (type === "uv")
    throw manifestInvalid("its server type uv (experimental in manifest 0.4) needs its packages installed with uv");
  if (bundleFile(archive.files, manifest.server.entry_point) === null)
    throw manifestInvalid(`its entry_point ${manifest.server.entry_point} is not a file of the bundle`);
  const given = mcpConfigOf(manifest);
  const { values, needs, uses } = resolveUserConfig(manifest, namedKeys(given));
  const config = substitute(given, values);
  const executables = new Set(archive.files.filter((f) => f.executable).map((f) => f.path));
  if (type === "binary") {
    const program = bundleFile(archive.files, config.command);
    if (program === null) throw manifestInvalid(`its command ${config.command} is not a file of the bundle`);
    executables.add(program.path); // the bundle says this file is the program; a zip made on Windows carries no mode
  }
  let name: string;
  try {
    name = appNameOfPackage(manifest.name);
  } catch {
    throw manifestInvalid(`no app name can be made of its name '${manifest.name.slice(0, 100)}'`);
  }
  const serverEnv: Record<string, string> = { ...DATA_HOME_ENV, ...config.env };
  for (const [key, value] of choices.env) serverEnv[key] = value;
  const needsOf = folderNeeds(needs, choices, manifest.name);
  const record: McpbBundleRecord = {
    source: bundle.source.slice(0, 4096),
    sha256: createHash("sha256").update(bundle.bytes).digest("hex"),
    bytes: bundle.bytes.length,
    manifestVersion: manifest.manifestVersion,
    name: manifest.name,
    version: manifest.version,
    author: [
      manifest.author.name,
      manifest.author.email ? `<${manifest.author.email}>` : "",
      manifest.author.url ? `(${manifest.author.url})` : "",
    ]
      .filter(Boolean)
      .join(" ")
      .slice(0, 1000),
    serverType: type,
    compatibility: compatibilityLines(manifest),
    signature: archive.signature,
    userConfig: uses,
    files: archive.files.length,
    unpackedBytes: archive.unpackedBytes,
  };
  const appManifest: Record<string, unknown> = {
    name,
    version: manifest.version,
    displayName: (manifest.display_name ?? manifest.name).slice(0, 200),
    description: (manifest.description || `The MCP server of the bundle ${manifest.name}`).slice(0, 500),
    permissions: { storage: true, network: false, ...(needsOf.length > 0 ? { folders: needsOf } : {}) },
    mcpServers: {
      [name]: { command: config.command, args: [...config.args, ...(choices.args ?? [])], env: serverEnv },
    },
    ...(type === "python"
      ? {
          requires: [
            {
              name: "Python 3",
              why: "The bundle's MCP server is a Python program, run by the system's python3 in the app sandbox.",
              how: "Install python3 (Debian/Ubuntu: apt install python3).",
            },
          ],
        }
      : {}),
  };
  return {
    name,
    manifest: appManifest,
    record,
    executables: [...executables].sort(),
    files: {
      ...bundleFiles(archive.files),
      "app.json": `${JSON.stringify(appManifest, null, 2)}\n`,
      [MCPB_BUNDLE_FILE]: `${JSON.stringify(record, null, 2)}\n`,
    },
  };
}
