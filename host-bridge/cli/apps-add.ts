// `personalclaw apps add npm:<name>@<exact version> [--env NAME=VALUE] [--folder NEED[:ACCESS]] [--arg VALUE]` (or
// `pypi:<name>==<exact version>`, host-bridge/sources/pypi-*.ts): resolves the package
// and its whole closure from the owner's npm source (install.npm_registry), pins every package,
// generates an ordinary app in the quarantine (host-bridge/sources/npm-app.ts) and installs it
// through the one install path: the gateway's review, the consent digest, the confined install.
// `registry:<server name>[@<version>]` takes an MCP Registry entry from install.mcp_registries and
// installs the npm or PyPI package or .mcpb bundle it names the same way
// (host-bridge/sources/mcp-registry-*.ts).
// `apps update <name> npm:...` re-resolves and updates the same way. Nothing of the package runs
// here; only its metadata and tarball bytes are read.
import { rm } from "node:fs/promises";
import semver from "semver";
import { GatewayError } from "../../kernel/contracts/errors";
import { homePaths } from "../home";
import { readOwnerConfig } from "../owner-config";
import { generateNpmApp, writeGeneratedApp, type GeneratedApp, type OwnerChoices } from "../sources/npm-app";
import { generatePypiApp } from "../sources/pypi-app";
import { generateMcpbApp } from "../sources/mcpb-app";
import { isMcpbLocation, readMcpbSource } from "../sources/mcpb-fetch";
import { resolvePypiClosure } from "../sources/pypi-resolve";
import { releaseOf } from "../sources/python-versions";
import { resolveNpmClosure } from "../sources/npm-resolve";
import { generateRegistryApp } from "../sources/mcp-registry-app";
import { parseRegistrySpec } from "../sources/mcp-registry-resolve";
import { NpmPackageNameSchema } from "../../kernel/contracts/npm-closure";
import { emitError, runAppsInstall, runAppsUpdate, type ConsentOptions } from "./apps";
import { callGateway } from "./gateway-client";
import { commandHint } from "./invocation";

export type SourceSpec =
  | { kind: "npm" | "pypi"; name: string; version: string }
  | { kind: "registry"; name: string; version: string | null }
  | { kind: "mcpb"; location: string };

/** Reads `npm:<name>@<exact version>`, `pypi:<name>==<exact version>`, `registry:<server name>[@<version>]` or an .mcpb path or URL; anything else is refused with the reason. */
export function parseSourceSpec(spec: string): SourceSpec {
  const invalid = (reason: string) =>
    new GatewayError("source_spec_invalid", { vars: { spec: spec.slice(0, 300), reason } });
  if (spec.startsWith("registry:")) {
    const entry = parseRegistrySpec(spec.slice("registry:".length));
    if ("refusal" in entry) throw invalid(entry.refusal);
    return { kind: "registry", ...entry };
  }
  if (spec.startsWith("pypi:")) {
    const m = /^pypi:([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)==(.+)$/.exec(spec);
    if (!m) throw invalid("write pypi:<name>==<exact version>");
    // An exact release only, as for npm: the owner consents to one release.
    if (releaseOf(m[2]!) === null) throw invalid(`'${m[2]}' is not an exact release such as 1.2.3`);
    return { kind: "pypi", name: m[1]!, version: m[2]! };
  }
  if (!spec.startsWith("npm:") && isMcpbLocation(spec)) return { kind: "mcpb", location: spec };
  if (!spec.startsWith("npm:"))
    throw invalid(
      "this version reads npm:<name>@<exact version>, pypi:<name>==<exact version>, registry:<server name>[@<version>] and a path or https:// URL of an .mcpb bundle",
    );
  const rest = spec.slice(4);
  const at = rest.lastIndexOf("@");
  if (at <= 0) throw invalid("it names no version: write npm:<name>@<exact version>");
  const name = rest.slice(0, at);
  const version = rest.slice(at + 1);
  if (!NpmPackageNameSchema.safeParse(name).success) throw invalid(`'${name}' is not an npm package name`);
  // An exact version only: the owner consents to one release, never to whatever a range means tomorrow.
  if (semver.valid(version) !== version) throw invalid(`'${version}' is not an exact version such as 1.2.3`);
  return { kind: "npm", name, version };
}

export interface AddOptions extends ConsentOptions {
  env?: Array<[string, string]>;
  folder?: Array<{ name: string; access: "read" | "read-write" }>;
  arg?: string[];
}

/** The generated app's owner choices from the command line's --env, --folder and --arg, in their order. */
function choicesOf(values: AddOptions): OwnerChoices {
  return { env: values.env ?? [], folders: values.folder ?? [], args: values.arg ?? [] };
}

/** True when an `apps update` argument names a package source rather than a folder. */
export function isSourceSpec(text: string): boolean {
  return text.startsWith("npm:") || text.startsWith("pypi:") || text.startsWith("registry:") || isMcpbLocation(text);
}

/** Resolves the source and writes the generated app into the quarantine; answers its name and folder. */
async function generateFromSource(
  home: string,
  spec: string,
  choices: OwnerChoices,
): Promise<{ name: string; folder: string }> {
  const source = parseSourceSpec(spec);
  const config = readOwnerConfig(home);
  if (!config.ok) throw new GatewayError("config_file_invalid", { vars: { reason: config.reason } });
  let app: GeneratedApp;
  if (source.kind === "mcpb")
    app = await generateMcpbApp(await readMcpbSource(source.location, process.cwd()), choices);
  else if (source.kind === "registry") app = await generateRegistryApp(config.config.install, source, choices);
  else if (source.kind === "pypi") {
    const index = config.config.install.pypi_index;
    app = generatePypiApp(await resolvePypiClosure({ index, name: source.name, version: source.version }), choices);
  } else {
    const registry = config.config.install.npm_registry;
    const resolved = await resolveNpmClosure({ registry, name: source.name, version: source.version });
    app = generateNpmApp(resolved.closure, resolved.description, choices);
  }
  return { name: app.name, folder: await writeGeneratedApp(homePaths(home).quarantine, app) };
}

/** The source an `apps update` of the same kind takes, as the app_exists hint names it (an entry: its latest). */
function updateSpecHint(spec: string): string {
  if (spec.startsWith("registry:")) return spec.replace(/@[^/]*$/, "");
  if (isMcpbLocation(spec)) return "<bundle>.mcpb";
  return spec.startsWith("pypi:") ? "pypi:<name>==<version>" : "npm:<name>@<version>";
}

function failWith(json: boolean) {
  return (error: GatewayError) =>
    emitError(
      {
        error: {
          code: error.code,
          message: error.message,
          ...(error.detail && typeof error.detail === "object" && "package" in error.detail
            ? { path: String((error.detail as { package: unknown }).package) }
            : {}),
        },
      },
      json,
      error.status,
    );
}

/** The flags that generate the same bytes again, for the retry with --consent the CLI prints. */
function choiceWords(choices: OwnerChoices): string[] {
  return [
    ...choices.env.flatMap(([name, value]) => ["--env", `${name}=${value}`]),
    ...choices.folders.flatMap(({ name, access }) => ["--folder", `${name}:${access}`]),
    ...choices.args.flatMap((arg) => ["--arg", arg]),
  ];
}

/** `apps add`: resolve, generate, then the review and install every app gets. */
export async function runAppsAdd(home: string, spec: string, values: AddOptions): Promise<number> {
  const fail = failWith(Boolean(values.json));
  let folder: string | null = null;
  try {
    const generated = await generateFromSource(home, spec, choicesOf(values));
    folder = generated.folder;
    // A second add of an installed name is an update, which keeps data/ and shows what changes.
    const installed = await callGateway(home, "apps-add", "GET", "/api/apps");
    if (
      installed.status === 200 &&
      (installed.body?.apps ?? []).some((a: { name: string }) => a.name === generated.name)
    )
      throw new GatewayError("app_exists", {
        message: `An app named '${generated.name}' is already installed; to change its version run: ${commandHint("apps", "update", generated.name, updateSpecHint(spec))} (or uninstall it first).`,
        detail: { name: generated.name },
      });
    return await runAppsInstall(home, folder, values, ["apps", "add", spec, ...choiceWords(choicesOf(values))]);
  } catch (error) {
    if (error instanceof GatewayError) return fail(error);
    throw error;
  } finally {
    if (folder !== null) await rm(folder, { recursive: true, force: true });
  }
}

/**
 * `apps update <name> npm:<name>@<version>`: re-resolves the source, generates the app again and
 * updates through the one update path: the review against the consented one (the closure's
 * diff among its changes), consent when anything changed, the confined install of the closure.
 */
export async function runAppsUpdateFromSource(
  home: string,
  name: string,
  spec: string,
  values: AddOptions,
): Promise<number> {
  let folder: string | null = null;
  try {
    const generated = await generateFromSource(home, spec, choicesOf(values));
    folder = generated.folder;
    return await runAppsUpdate(home, name, folder, values, [
      "apps",
      "update",
      name,
      spec,
      ...choiceWords(choicesOf(values)),
    ]);
  } catch (error) {
    if (error instanceof GatewayError) return failWith(Boolean(values.json))(error);
    throw error;
  } finally {
    if (folder !== null) await rm(folder, { recursive: true, force: true });
  }
}
