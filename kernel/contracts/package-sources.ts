// The dashboard's way to package sources, as the bridge contract and the /api/sources routes carry
// it: a spec staged into the quarantine exactly as `apps add` generates it (the owner's --env,
// --folder and --arg written as on the command line), a page of one configured MCP Registry's
// entries, and what each installed app's source offers now. Provenance is the registry an entry
// came from: "official" only for the official registry's URL (isOfficialMcpRegistry), never for
// what an entry or a registry says about itself. Imports nothing but zod.
import { z } from "zod";
import { APP_NAME_PATTERN } from "../rules/app-name";

/** A spec and the owner's choices, each written as `apps add` takes it: `NAME=VALUE`, `NEED[:read|:read-write]`, an argument. */
export const SourceStageRequestSchema = z
  .object({
    spec: z.string().min(1).max(4096),
    env: z.array(z.string().max(4500)).max(64).optional(),
    folders: z.array(z.string().max(100)).max(32).optional(),
    args: z.array(z.string().max(4096)).max(64).optional(),
  })
  .strict();
export type SourceStageRequest = z.infer<typeof SourceStageRequestSchema>;

/** The generated app's name and its folder in the quarantine, which the ordinary preview and install take. */
export const SourceStagedSchema = z.object({ name: z.string().regex(APP_NAME_PATTERN), source: z.string().max(4096) });

/** One package an entry lists, as the Store shows it. */
const ListedPackageSchema = z.object({
  registryType: z.string(),
  identifier: z.string(),
  version: z.string().nullable(),
});

/** One entry of a registry's listing: where it came from, what it says, the spec that adds it. */
export const RegistryListingEntrySchema = z.object({
  registry: z.string(),
  /** True only when `registry` is the official MCP Registry's URL. */
  official: z.boolean(),
  name: z.string(),
  version: z.string(),
  title: z.string().nullable(),
  description: z.string().nullable(),
  repository: z.string().nullable(),
  packages: z.array(ListedPackageSchema),
  /** What `apps add` (and the Add page) takes for it: `registry:<name>`. */
  spec: z.string(),
});
export type RegistryListingEntry = z.infer<typeof RegistryListingEntrySchema>;

export const RegistryListingRequestSchema = z
  .object({
    /** One of install.mcp_registries; absent: the first. */
    registry: z.string().max(2048).optional(),
    search: z.string().max(200).optional(),
    cursor: z.string().max(1024).optional(),
  })
  .strict();

/** A page of one registry's latest entries, and every registry the owner configured. */
export const RegistryListingSchema = z.object({
  registries: z.array(z.object({ url: z.string(), official: z.boolean() })),
  registry: z.string().nullable(),
  entries: z.array(RegistryListingEntrySchema),
  /** The registry's cursor for the next page; null on the last. */
  nextCursor: z.string().nullable(),
});

/**
 * What of an installed app's consented review says where it came from: the closure's root, the
 * registry entry, the bundle. Other review fields are not sent; a review kept before these fields
 * existed has none of them.
 */
const SourceOfReviewSchema = z.object({
  app: z.object({ displayName: z.string().max(500).nullable(), version: z.string().max(256) }),
  npmClosure: z
    .object({ registry: z.string().max(2048), root: z.string().max(600) })
    .nullable()
    .optional(),
  mcpRegistryEntry: z
    .object({ registry: z.string().max(2048), name: z.string().max(200), version: z.string().max(255) })
    .optional(),
  mcpbBundle: z.object({ source: z.string().max(4096), version: z.string().max(128) }).optional(),
});

/** The installed apps whose source the bridge looks up, each with its consented review's source fields. */
export const SourceCheckRequestSchema = z
  .object({
    apps: z.array(z.object({ name: z.string().regex(APP_NAME_PATTERN), review: SourceOfReviewSchema })).max(1000),
  })
  .strict();
export type SourceCheckRequest = z.infer<typeof SourceCheckRequestSchema>;

/** What one installed app's source offers now. */
export const SourceCheckSchema = z.object({
  app: z.string(),
  /** "npm", "pypi" or "registry": what the app was generated from; "mcpb" (a bundle names no newer version). */
  kind: z.enum(["npm", "pypi", "registry", "mcpb"]),
  /** Where it was resolved: the npm registry, the PyPI index, the MCP Registry, the bundle's path or URL. */
  from: z.string(),
  /** The package or entry, e.g. `@modelcontextprotocol/server-memory` or `io.github.owner/server`. */
  package: z.string(),
  installed: z.string(),
  /** The newest version the source offers now; null when it cannot say (a bundle) or was not reached. */
  latest: z.string().nullable(),
  /** True when `latest` is newer than what is installed. */
  outdated: z.boolean(),
  /** The spec `apps update <app> <spec>` takes for the newer version; null when there is none. */
  update: z.string().nullable(),
  /** Why the source could not say, with its stable code. */
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
});
export type SourceCheck = z.infer<typeof SourceCheckSchema>;

export const SourceChecksSchema = z.object({ apps: z.array(SourceCheckSchema) });
