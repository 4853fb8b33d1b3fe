// Turns an .mcpb bundle into an ordinary app folder: the bundle's files (its node_modules or
// server/lib included, staged and scanned like any bundle's), a generated app.json and
// mcpb-bundle.json, the record of the bundle (its sha256, author, version, compatibility,
// signature state and what became of each user_config field), which the review shows and the
// consent digest covers. From there it is previewed, consented to and installed like every app.
//
// The server runs in the app sandbox with its working directory in the app folder, so
// `${__dirname}` becomes `.`; HOME and XDG_* point inside data/ (DATA_HOME_ENV); no network. What
// each `${user_config.KEY}` becomes (a folder need, a write-only secret, the owner's
// --user-config value or the default) is mcpb-user-config.ts's to say. What cannot be given to a
// confined server is refused by name, and so are the owner's own folders (${DESKTOP}...).
import { createHash } from "node:crypto";
import { posix } from "node:path";
import { GatewayError } from "../../kernel/contracts/errors";
import { folderInside } from "../../kernel/contracts/folder-grants";
import { MCPB_BUNDLE_FILE, type McpbBundleRecord } from "../../kernel/contracts/mcpb-bundle";
import { DATA_PLACEHOLDER } from "../sandbox/server-env";
import { MCPB_CAPS, readMcpbArchive, type McpbArchive, type McpbCaps, type McpbFile } from "./mcpb-archive";
import type { SignatureTrust } from "./mcpb-signature";
import { parseMcpbManifest, type McpbManifest } from "./mcpb-manifest";
import {
  configRefused,
  isUnsetField,
  resolveUserConfig,
  type FolderNeed,
  type McpConfig,
  type Resolved,
} from "./mcpb-user-config";
import { appNameOfPackage, DATA_HOME_ENV, type GeneratedApp } from "./npm-app";

/** Names at the top of the app folder that the generated app, the install or data/ own. */
const RESERVED_AT_TOP = new Set(["app.json", MCPB_BUNDLE_FILE, "installed.json", "npm-closure.json", "data"]);

const manifestInvalid = (reason: string) => new GatewayError("mcpb_manifest_invalid", { vars: { reason } });

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
  const unset = (text: string) => isUnsetField(text, values);
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

/** What the owner adds on the `apps add` command line: variables, folder needs, arguments after the bundle's, user_config values. */
export interface McpbOwnerChoices {
  env: ReadonlyArray<[string, string]>;
  /** --user-config KEY=VALUE: values of the bundle's non-sensitive fields. */
  userConfig?: ReadonlyArray<[string, string]>;
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

/** The signature's state and signer; a block that does not sign the bundle's bytes is refused (mcpb_signature_invalid). */
async function signatureOf(
  archive: McpbArchive,
  trust: TrustOf,
): Promise<Pick<McpbBundleRecord, "signature" | "signer">> {
  if (archive.signed === null) return { signature: "unsigned" };
  // Loaded for a signed bundle only: pkijs and asn1js are the CLI's largest libraries after undici.
  const { verifyMcpbSignature } = await import("./mcpb-signature");
  const { state, ...signer } = await verifyMcpbSignature(archive.signed.zip, archive.signed.block, await trust());
  return { signature: state, signer };
}

/** The system's trust store alone, for a caller that names no owner's extra authorities. */
const systemTrust: TrustOf = async () => (await import("./mcpb-signature")).signatureTrustOf("", undefined);

/** Gives the authorities a signature may chain to; asked only for a signed bundle. */
export type TrustOf = () => SignatureTrust | Promise<SignatureTrust>;

/**
 * The generated app of one bundle and the owner's choices; throws a GatewayError naming what is
 * refused. `trust` gives the authorities a signature may chain to, read only for a signed bundle.
 */
export async function generateMcpbApp(
  bundle: McpbSource,
  choices: McpbOwnerChoices,
  trust: TrustOf = systemTrust,
  caps: McpbCaps = MCPB_CAPS,
): Promise<GeneratedApp & { record: McpbBundleRecord }> {
  const archive = await readMcpbArchive(bundle.bytes, caps);
  const signature = await signatureOf(archive, trust);
  const manifest = parseMcpbManifest(archive.files.find((f) => f.path === "manifest.json")?.bytes);
  const type = manifest.server.type;
  if (type === "uv")
    throw manifestInvalid("its server type uv (experimental in manifest 0.4) needs its packages installed with uv");
  if (bundleFile(archive.files, manifest.server.entry_point) === null)
    throw manifestInvalid(`its entry_point ${manifest.server.entry_point} is not a file of the bundle`);
  const given = mcpConfigOf(manifest);
  const { values, needs, secrets, uses } = resolveUserConfig(manifest, given, choices.userConfig ?? []);
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
    ...signature,
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
    ...(secrets.length > 0 ? { secrets } : {}),
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
