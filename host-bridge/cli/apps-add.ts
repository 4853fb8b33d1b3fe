// `personalclaw apps add npm:<name>@<exact version> [--env NAME=VALUE ...]`: resolves the package
// and its whole closure from the owner's npm source (install.npm_registry), pins every package,
// generates an ordinary app in the quarantine (host-bridge/sources/npm-app.ts) and installs it
// through the one install path: the gateway's review, the consent digest, the confined install.
// Nothing of the package runs here; only its metadata and tarball bytes are read.
import { rm } from "node:fs/promises";
import semver from "semver";
import { GatewayError } from "../../workers/contracts/errors";
import { homePaths } from "../home";
import { readOwnerConfig } from "../owner-config";
import { generateNpmApp, writeGeneratedApp } from "../sources/npm-app";
import { resolveNpmClosure } from "../sources/npm-resolve";
import { NpmPackageNameSchema } from "../../workers/contracts/npm-closure";
import { emitError, runAppsInstall, type ConsentOptions } from "./apps";
import { callGateway } from "./gateway-client";
import { commandHint } from "./invocation";

export type SourceSpec = { kind: "npm"; name: string; version: string };

/** Reads `npm:<name>@<exact version>`; anything else is refused with the reason. */
export function parseSourceSpec(spec: string): SourceSpec {
  const invalid = (reason: string) =>
    new GatewayError("source_spec_invalid", { vars: { spec: spec.slice(0, 300), reason } });
  if (!spec.startsWith("npm:"))
    throw invalid("this version reads npm:<name>@<exact version> (pypi:, .mcpb and registry: are not read yet)");
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
}

/** `apps add`: resolve, generate, then the review and install every app gets. */
export async function runAppsAdd(home: string, spec: string, values: AddOptions): Promise<number> {
  const json = Boolean(values.json);
  const fail = (error: GatewayError) =>
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
  let folder: string | null = null;
  try {
    const source = parseSourceSpec(spec);
    const config = readOwnerConfig(home);
    if (!config.ok) throw new GatewayError("config_file_invalid", { vars: { reason: config.reason } });
    const registry = config.config.install.npm_registry;
    const resolved = await resolveNpmClosure({ registry, name: source.name, version: source.version });
    const app = generateNpmApp(resolved.closure, resolved.description, values.env ?? []);
    // A second add of an installed name is an update, which keeps data/ and shows what changes.
    const installed = await callGateway(home, "apps-add", "GET", "/api/apps");
    if (installed.status === 200 && (installed.body?.apps ?? []).some((a: { name: string }) => a.name === app.name))
      throw new GatewayError("app_exists", {
        message: `An app named '${app.name}' is already installed; to change its version run: ${commandHint("apps", "update", app.name, "<folder>")} (or uninstall it first).`,
        detail: { name: app.name },
      });
    folder = await writeGeneratedApp(homePaths(home).quarantine, app);
    const envWords = (values.env ?? []).flatMap(([name, value]) => ["--env", `${name}=${value}`]);
    return await runAppsInstall(home, folder, values, ["apps", "add", spec, ...envWords]);
  } catch (error) {
    if (error instanceof GatewayError) return fail(error);
    throw error;
  } finally {
    if (folder !== null) await rm(folder, { recursive: true, force: true });
  }
}
