// Turns an MCP Registry entry into the generated app of the package it names, through the same
// path as `npm:` and `pypi:` (the package and its closure resolved from the owner's own npm source
// or Python index, whatever registryBaseUrl the entry names) or as an .mcpb bundle (fetched from
// the URL the entry names under the egress address rules, a local address only where it is the
// literal of the owner's registry URL, and refused unless its bytes are the entry's fileSha256),
// plus what the entry adds:
// - its environmentVariables: a secret one (isSecret) is declared as a write-only secret the
//   owner assigns (`personalclaw secrets assign`), never a value in app.json, and the server gets
//   its value in that variable at its start (`${secret:NAME}` in its env); any other one is
//   set from the owner's --env, or from the entry's fixed `value`, and a required one the owner
//   did not give is refused, naming it; the rest are shown in the review as settings not given;
// - its packageArguments: a package that needs arguments is refused unless the owner gives them
//   (--arg); runtimeArguments are for the runner a client would use (npx, uvx, docker), which
//   the pinned install replaces, and are not read;
// - mcp-registry-entry.json: the registry, the entry's name and version and the package it resolved
//   to, which the review shows (host-bridge/install/review.ts) and the consent digest covers.
import { createHash } from "node:crypto";
import { GatewayError } from "../../kernel/contracts/errors";
import {
  MCP_REGISTRY_ENTRY_FILE,
  type McpRegistryOrigin,
  type RegistryServer,
  type RegistrySetting,
} from "../../kernel/contracts/mcp-registry";
import { secretReference } from "../../kernel/contracts/mcp-server-secrets";
import { SECRET_NAME } from "../../kernel/contracts/secrets";
import type { OwnerConfig } from "../owner-config";
import { generateMcpbApp, type TrustOf } from "./mcpb-app";
import { readMcpbSource } from "./mcpb-fetch";
import { choosePackage, resolveRegistryEntry, type ChosenPackage, type RegistrySpec } from "./mcp-registry-resolve";
import { generateNpmApp, type GeneratedApp, type OwnerChoices } from "./npm-app";
import { resolveNpmClosure } from "./npm-resolve";
import { generatePypiApp } from "./pypi-app";
import { resolvePypiClosure } from "./pypi-resolve";

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** What the entry's variables become in the generated app. */
export interface RegistrySettingsPlan {
  /** The owner's --env values, then the entry's fixed values the owner did not set. */
  env: Array<[string, string]>;
  secrets: Array<{ name: string; why: string }>;
  settings: RegistrySetting[];
}

function unusable(server: RegistryServer, reason: string): GatewayError {
  return new GatewayError("mcp_registry_entry_unusable", { vars: { name: server.name, reason } });
}

function describeVariable(variable: { name: string; description?: string | undefined; default?: string | undefined }) {
  const about = [
    variable.description?.slice(0, 200),
    variable.default ? `for example ${variable.default.slice(0, 200)}` : "",
  ]
    .filter(Boolean)
    .join(", ");
  return about ? `${variable.name} (${about})` : variable.name;
}

/** The package's arguments an owner must give: the required ones and those the entry fixes. */
function argumentsNeeded(chosen: ChosenPackage): string[] {
  return (chosen.listed.packageArguments ?? [])
    .filter((a) => a.isRequired === true || a.value !== undefined)
    .map((a) =>
      (a.type === "named" ? (a.name ?? "a named argument") : (a.valueHint ?? a.value ?? "a value")).slice(0, 100),
    );
}

/**
 * The entry's variables for the generated app, refusing what cannot be honoured: a required
 * variable the owner did not give, a secret given as --env (it would be written in app.json),
 * a name no environment (or no secret) can carry, a package whose arguments were not given.
 */
export function planRegistrySettings(
  server: RegistryServer,
  chosen: ChosenPackage,
  ownerEnv: ReadonlyArray<[string, string]>,
  ownerGaveArguments: boolean,
): RegistrySettingsPlan {
  const needed = argumentsNeeded(chosen);
  if (needed.length > 0 && !ownerGaveArguments)
    throw unusable(server, `its package takes arguments (${needed.join(", ")}): give them with --arg, in order`);
  const given = new Set(ownerEnv.map(([name]) => name));
  const plan: RegistrySettingsPlan = { env: [...ownerEnv], secrets: [], settings: [] };
  const missing: string[] = [];
  const seen = new Set<string>();
  for (const variable of chosen.listed.environmentVariables ?? []) {
    const name = variable.name;
    if (!ENV_NAME.test(name)) throw unusable(server, `its variable '${name.slice(0, 64)}' is not a variable name`);
    if (seen.has(name)) continue;
    seen.add(name);
    const description = variable.description?.slice(0, 500) ?? null;
    const required = variable.isRequired === true;
    if (variable.isSecret === true) {
      if (!SECRET_NAME.test(name))
        throw unusable(server, `its secret ${name} cannot be held as a secret (capital letters, digits and _ only)`);
      if (given.has(name))
        throw unusable(
          server,
          `${name} is a secret: store it with \`personalclaw secrets set\` and assign it to the app, never with --env (a --env value is written in app.json and shown in the review)`,
        );
      plan.secrets.push({ name, why: description ?? `The MCP Registry entry ${server.name} marks ${name} secret.` });
      plan.settings.push({ name, description, required, secret: true, set: false });
      continue;
    }
    // A fixed value with {placeholders} is a template this does not fill: the owner gives it.
    const fixed = variable.value !== undefined && !variable.value.includes("{") ? variable.value : undefined;
    if (!given.has(name) && fixed !== undefined) plan.env.push([name, fixed]);
    const set = given.has(name) || fixed !== undefined;
    if (!set && required) missing.push(describeVariable(variable));
    plan.settings.push({ name, description, required, secret: false, set });
  }
  if (missing.length > 0)
    throw new GatewayError("mcp_registry_setting_required", {
      vars: { name: server.name, variables: missing.join("; ") },
    });
  return plan;
}

/**
 * The generated app with the entry's secrets declared, its server holding each in the variable
 * the entry names (`${secret:NAME}`, mcp-server-secrets.ts), and its origin recorded beside it.
 */
export function withRegistryOrigin(
  app: GeneratedApp,
  origin: McpRegistryOrigin,
  secrets: RegistrySettingsPlan["secrets"],
): GeneratedApp {
  type Server = { env?: Record<string, string> };
  const servers = (app.manifest.mcpServers ?? {}) as Record<string, Server>;
  const declared = (app.manifest.secrets ?? []) as RegistrySettingsPlan["secrets"];
  const held = Object.fromEntries(secrets.map((s) => [s.name, secretReference(s.name)]));
  const manifest =
    secrets.length === 0
      ? app.manifest
      : {
          ...app.manifest,
          secrets: [...declared, ...secrets.filter((s) => !declared.some((d) => d.name === s.name))],
          mcpServers: Object.fromEntries(
            Object.entries(servers).map(([name, server]) => [name, { ...server, env: { ...server.env, ...held } }]),
          ),
        };
  return {
    ...app,
    manifest,
    files: {
      ...app.files,
      "app.json": `${JSON.stringify(manifest, null, 2)}\n`,
      [MCP_REGISTRY_ENTRY_FILE]: `${JSON.stringify(origin, null, 2)}\n`,
    },
  };
}

/** The entry's .mcpb bundle, read once and refused unless its bytes are the ones the entry pins. */
async function generateEntryBundle(
  registry: string,
  server: RegistryServer,
  chosen: Extract<ChosenPackage, { kind: "mcpb" }>,
  choices: OwnerChoices,
  trust?: TrustOf,
): Promise<GeneratedApp> {
  // The entry's URL is not the owner's: only the registry URL the owner named may make a local address reachable.
  const bundle = await readMcpbSource(chosen.url, "/", { source: registry });
  if (createHash("sha256").update(bundle.bytes).digest("hex") !== chosen.sha256)
    throw new GatewayError("mcp_registry_bundle_mismatch", {
      vars: { bundle: chosen.url.slice(0, 500), name: server.name, sha256: chosen.sha256 },
    });
  return generateMcpbApp(bundle, choices, trust);
}

/** The generated app of the chosen package, and the words the review shows for what it resolved to. */
async function generatePackageApp(
  install: OwnerConfig["install"],
  found: { registry: string; server: RegistryServer },
  chosen: ChosenPackage,
  choices: OwnerChoices,
  trust?: TrustOf,
): Promise<{ app: GeneratedApp; resolvedTo: string }> {
  const given = choices.userConfig?.[0];
  if (given && chosen.kind !== "mcpb")
    throw new GatewayError("mcpb_user_config_refused", {
      vars: {
        field: given[0],
        reason: `the entry's package is ${chosen.kind}, not an .mcpb bundle: give its variables with --env`,
      },
    });
  if (chosen.kind === "mcpb")
    return {
      app: await generateEntryBundle(found.registry, found.server, chosen, choices, trust),
      resolvedTo: `.mcpb ${chosen.url} (sha256 ${chosen.sha256})`,
    };
  if (chosen.kind === "npm") {
    const { name, version } = chosen;
    const resolved = await resolveNpmClosure({ registry: install.npm_registry, name, version });
    return {
      app: generateNpmApp(resolved.closure, resolved.description ?? found.server.description ?? null, choices),
      resolvedTo: `npm:${name}@${version}`,
    };
  }
  const project = await resolvePypiClosure({ index: install.pypi_index, name: chosen.name, version: chosen.version });
  return { app: generatePypiApp(project, choices), resolvedTo: `pypi:${chosen.name}==${chosen.version}` };
}

/** `registry:<name>[@<version>]`: the entry from the owner's registries, its package resolved and generated. */
export async function generateRegistryApp(
  install: OwnerConfig["install"],
  spec: RegistrySpec,
  choices: OwnerChoices,
  trust?: TrustOf,
): Promise<GeneratedApp> {
  const { registry, server } = await resolveRegistryEntry({ registries: install.mcp_registries, ...spec });
  const chosen = choosePackage(server);
  const plan = planRegistrySettings(server, chosen, choices.env, choices.args.length > 0);
  const entryChoices: OwnerChoices = { ...choices, env: plan.env };
  const { app, resolvedTo } = await generatePackageApp(install, { registry, server }, chosen, entryChoices, trust);
  const origin: McpRegistryOrigin = {
    registry,
    name: server.name,
    version: server.version,
    package: resolvedTo,
    settings: plan.settings,
  };
  return withRegistryOrigin(app, origin, plan.secrets);
}
