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
import { GatewayError } from "../../kernel/contracts/errors";
import type { OwnerChoices } from "../sources/npm-app";
import { isMcpbLocation } from "../sources/mcpb-fetch";
import { generateFromSource } from "../sources/generate-from-source";
import { runAppsInstall, runAppsUpdate, type ConsentOptions } from "./apps";
import { callGateway } from "./gateway-client";
import { commandHint } from "./invocation";
import { printError } from "./print";

export interface AddOptions extends ConsentOptions {
  env?: Array<[string, string]>;
  folder?: Array<{ name: string; access: "read" | "read-write" }>;
  arg?: string[];
  "user-config"?: Array<[string, string]>;
}

/** The generated app's owner choices from the command line's --env, --folder, --arg and --user-config, in their order. */
function choicesOf(values: AddOptions): OwnerChoices {
  const userConfig = values["user-config"] ?? [];
  return {
    env: values.env ?? [],
    folders: values.folder ?? [],
    args: values.arg ?? [],
    ...(userConfig.length > 0 ? { userConfig } : {}),
  };
}

/** --user-config is an .mcpb bundle's: a package from npm or PyPI has no user_config to give it to. */
function refuseUserConfigFor(spec: string, choices: OwnerChoices): void {
  const first = choices.userConfig?.[0];
  if (first && (spec.startsWith("npm:") || spec.startsWith("pypi:")))
    throw new GatewayError("mcpb_user_config_refused", {
      vars: { field: first[0], reason: "--user-config is for an .mcpb bundle; give a package's variables with --env" },
    });
}

/** The source an `apps update` of the same kind takes, as the app_exists hint names it (an entry: its latest). */
function updateSpecHint(spec: string): string {
  if (spec.startsWith("registry:")) return spec.replace(/@[^/]*$/, "");
  if (isMcpbLocation(spec)) return "<bundle>.mcpb";
  return spec.startsWith("pypi:") ? "pypi:<name>==<version>" : "npm:<name>@<version>";
}

function failWith(json: boolean) {
  return (error: GatewayError) =>
    printError(
      {
        code: error.code,
        message: error.message,
        ...(error.detail && typeof error.detail === "object" && "package" in error.detail
          ? { path: String((error.detail as { package: unknown }).package) }
          : {}),
      },
      json,
    );
}

/** The flags that generate the same bytes again, for the retry with --consent the CLI prints. */
function choiceWords(choices: OwnerChoices): string[] {
  return [
    ...choices.env.flatMap(([name, value]) => ["--env", `${name}=${value}`]),
    ...choices.folders.flatMap(({ name, access }) => ["--folder", `${name}:${access}`]),
    ...choices.args.flatMap((arg) => ["--arg", arg]),
    ...(choices.userConfig ?? []).flatMap(([key, value]) => ["--user-config", `${key}=${value}`]),
  ];
}

/** `apps add`: resolve, generate, then the review and install every app gets. */
export async function runAppsAdd(home: string, spec: string, values: AddOptions): Promise<number> {
  const fail = failWith(Boolean(values.json));
  let folder: string | null = null;
  try {
    refuseUserConfigFor(spec, choicesOf(values));
    const generated = await generateFromSource(home, spec, choicesOf(values), process.cwd());
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
    refuseUserConfigFor(spec, choicesOf(values));
    const generated = await generateFromSource(home, spec, choicesOf(values), process.cwd());
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
