// An MCP Registry entry as `apps add registry:` reads one: the answer of the registry API v0.1
// (GET /v0.1/servers/{serverName}/versions/{version}, a ServerResponse holding one server.json),
// the record of where a generated app came from (mcp-registry-entry.json, written by the bridge
// beside the package it resolved to) and the review's words for it. Only the fields PersonalClaw
// acts on are read; any other key an entry carries is ignored, never trusted. Provenance is the
// registry the entry came from: "official" only for the official registry's URL, never for what
// an entry or a registry's `_meta` says about itself. Imports nothing but zod.
import { z } from "zod";

/** The official MCP Registry: the default of install.mcp_registries. */
export const OFFICIAL_MCP_REGISTRY = "https://registry.modelcontextprotocol.io";

/** server.json's name: a reverse-DNS namespace, one slash, the server's own name. */
export const MCP_SERVER_NAME = /^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/;

/** The key of the registry-managed block in a ServerResponse's `_meta`. */
export const OFFICIAL_META_KEY = "io.modelcontextprotocol.registry/official";

const text = (max: number) => z.string().max(max);

/** An input (server.json's Input and KeyValueInput): what a client asks the user for, or a fixed value. */
const RegistryInputSchema = z.object({
  description: text(4096).optional(),
  isRequired: z.boolean().optional(),
  isSecret: z.boolean().optional(),
  format: text(64).optional(),
  value: text(4096).optional(),
  default: text(4096).optional(),
  placeholder: text(4096).optional(),
  choices: z.array(text(4096)).max(256).optional(),
});

const RegistryEnvironmentVariableSchema = RegistryInputSchema.extend({ name: text(256) });

const RegistryArgumentSchema = RegistryInputSchema.extend({
  type: text(32),
  name: text(256).optional(),
  valueHint: text(256).optional(),
  isRepeated: z.boolean().optional(),
});

/** One of an entry's packages (server.json `packages[]`). */
export const RegistryPackageSchema = z.object({
  registryType: text(64),
  registryBaseUrl: text(2048).optional(),
  identifier: text(2048),
  version: text(255).optional(),
  fileSha256: text(64).optional(),
  runtimeHint: text(64).optional(),
  transport: z.object({ type: text(64), url: text(2048).optional() }).optional(),
  runtimeArguments: z.array(RegistryArgumentSchema).max(256).optional(),
  packageArguments: z.array(RegistryArgumentSchema).max(256).optional(),
  environmentVariables: z.array(RegistryEnvironmentVariableSchema).max(256).optional(),
});
export type RegistryPackage = z.infer<typeof RegistryPackageSchema>;

/** server.json (ServerDetail): the entry's name, version, description, repository and packages. */
export const RegistryServerSchema = z.object({
  name: text(200).regex(MCP_SERVER_NAME),
  version: text(255).min(1),
  // server.json caps a description at 100 characters; another registry may write more, shown cut.
  description: text(4096).optional(),
  title: text(4096).optional(),
  repository: z.object({ url: text(2048).optional(), source: text(64).optional() }).optional(),
  packages: z.array(RegistryPackageSchema).max(64).optional(),
  remotes: z.array(z.unknown()).max(64).optional(),
});
export type RegistryServer = z.infer<typeof RegistryServerSchema>;

/** The API's answer for one version: the server and the registry's own metadata. */
export const RegistryServerResponseSchema = z.object({
  server: RegistryServerSchema,
  _meta: z
    .object({
      [OFFICIAL_META_KEY]: z.object({ status: text(32).optional(), isLatest: z.boolean().optional() }).optional(),
    })
    .optional(),
});
export type RegistryServerResponse = z.infer<typeof RegistryServerResponseSchema>;

/** The file a generated app ships: where its MCP server came from (the consent digest covers its bytes). */
export const MCP_REGISTRY_ENTRY_FILE = "mcp-registry-entry.json";

/** One environment variable the entry names, as the generated app took it. */
export const RegistrySettingSchema = z
  .object({
    name: text(256),
    description: text(500).nullable(),
    required: z.boolean(),
    /** isSecret: declared as a write-only secret the owner assigns, never a value in app.json. */
    secret: z.boolean(),
    /** A non-secret variable the server is given (by the owner's --env, or the entry's fixed value). */
    set: z.boolean(),
  })
  .strict();
export type RegistrySetting = z.infer<typeof RegistrySettingSchema>;

export const McpRegistryOriginSchema = z
  .object({
    /** The registry's base URL, one of install.mcp_registries when it was resolved. */
    registry: z.string().url().max(2048),
    name: text(200).regex(MCP_SERVER_NAME),
    version: text(255),
    /** The package it resolved to: `npm:<name>@<version>`, `pypi:<name>==<version>` or `.mcpb <URL>`. */
    package: text(2100),
    settings: z.array(RegistrySettingSchema).max(256),
  })
  .strict();
export type McpRegistryOrigin = z.infer<typeof McpRegistryOriginSchema>;

/** The review's words for the entry an app came from. */
export const McpRegistryEntryReviewSchema = z.object({
  registry: z.string(),
  /** True only when `registry` is the official registry's URL. */
  official: z.boolean(),
  name: z.string(),
  namespace: z.string(),
  version: z.string(),
  package: z.string(),
  settings: z.array(RegistrySettingSchema),
  note: z.string(),
});
export type McpRegistryEntryReview = z.infer<typeof McpRegistryEntryReviewSchema>;

export const MCP_REGISTRY_NOTE =
  "A registry vouches for who published a name, not for what its package does; the package's bytes are pinned above and run confined like any app.";

/** A registry URL compared as the same place: scheme, host and port, path without trailing slashes. */
export function registryUrlKey(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}${parsed.pathname.replace(/\/+$/, "")}`;
}

/** Whether `url` is the official MCP Registry: its own URL, whatever an entry claims. */
export function isOfficialMcpRegistry(url: string): boolean {
  return registryUrlKey(url) === registryUrlKey(OFFICIAL_MCP_REGISTRY);
}

/** What the review shows of an app's registry entry. */
export function mcpRegistryEntryReview(origin: McpRegistryOrigin): McpRegistryEntryReview {
  return {
    registry: origin.registry,
    official: isOfficialMcpRegistry(origin.registry),
    name: origin.name,
    namespace: origin.name.slice(0, origin.name.indexOf("/")),
    version: origin.version,
    package: origin.package,
    settings: origin.settings.map((s) => ({ ...s })),
    note: MCP_REGISTRY_NOTE,
  };
}
