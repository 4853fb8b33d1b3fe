// The one way a package source becomes an app folder in the quarantine, for `apps add`, `apps
// update <name> <spec>` and the dashboard's Add page alike: reads the spec (npm:, pypi:,
// registry: or an .mcpb path or URL), resolves and pins it from the owner's configured sources
// (install.npm_registry, install.pypi_index, install.mcp_registries) and writes the generated app
// under <quarantine>/sources/. Nothing of the package runs here; only its metadata and bytes are read.
import semver from "semver";
import { GatewayError } from "../../kernel/contracts/errors";
import { NpmPackageNameSchema } from "../../kernel/contracts/npm-closure";
import { homePaths } from "../home";
import { readOwnerConfig } from "../owner-config";
import { generateNpmApp, writeGeneratedApp, type GeneratedApp, type OwnerChoices } from "./npm-app";
import { generatePypiApp } from "./pypi-app";
import { generateMcpbApp } from "./mcpb-app";
import { parentEnvironment } from "../settings";
import { isMcpbLocation, readMcpbSource } from "./mcpb-fetch";
import { resolvePypiClosure } from "./pypi-resolve";
import { releaseOf } from "./python-versions";
import { resolveNpmClosure } from "./npm-resolve";
import { generateRegistryApp } from "./mcp-registry-app";
import { parseRegistrySpec } from "./mcp-registry-resolve";

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

/** True when an `apps update` argument names a package source rather than a folder. */
export function isSourceSpec(text: string): boolean {
  return text.startsWith("npm:") || text.startsWith("pypi:") || text.startsWith("registry:") || isMcpbLocation(text);
}

/**
 * Resolves the source and writes the generated app into the quarantine; answers its name and
 * folder. A relative .mcpb path is read from `cwd`; with `tag` the folder is the caller's own
 * (writeGeneratedApp), so another caller generating the same bytes never removes it.
 */
export async function generateFromSource(
  home: string,
  spec: string,
  choices: OwnerChoices,
  cwd: string,
  tag?: string,
): Promise<{ name: string; folder: string }> {
  const source = parseSourceSpec(spec);
  const config = readOwnerConfig(home);
  if (!config.ok) throw new GatewayError("config_file_invalid", { vars: { reason: config.reason } });
  let app: GeneratedApp;
  // A signed .mcpb's signer is checked against what the egress broker trusts: the system store and egress.extra_ca_certs.
  const trust = async () =>
    (await import("./mcpb-signature")).signatureTrustOf(
      config.config.egress.extra_ca_certs,
      parentEnvironment().SSL_CERT_FILE,
    );
  if (source.kind === "mcpb") app = await generateMcpbApp(await readMcpbSource(source.location, cwd), choices, trust);
  else if (source.kind === "registry") app = await generateRegistryApp(config.config.install, source, choices, trust);
  else if (source.kind === "pypi") {
    const index = config.config.install.pypi_index;
    app = generatePypiApp(await resolvePypiClosure({ index, name: source.name, version: source.version }), choices);
  } else {
    const registry = config.config.install.npm_registry;
    const resolved = await resolveNpmClosure({ registry, name: source.name, version: source.version });
    app = generateNpmApp(resolved.closure, resolved.description, choices);
  }
  return { name: app.name, folder: await writeGeneratedApp(homePaths(home).quarantine, app, tag) };
}
