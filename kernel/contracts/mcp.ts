// App MCP servers: the sealed definition the owner consented to, the key each is registered
// under in <home>/mcp.json, and the messages the CLI's `mcp run`, the bridge and the gateway
// exchange about them. Shared by workers/, durable/ and host-bridge/; imports nothing but zod.
import { z } from "zod";
import { FolderGrantSchema } from "./folder-grants";
import { canonicalJson } from "../crypto/canonical-json";
import { sha256Hex } from "../crypto/hex";
import { mcpRemoteHost, type AppManifest } from "./manifest";

/** After this many failed starts in a row a server is not started again until the owner retries (MCP-04). */
export const MCP_FAILED_STARTS_LIMIT = 3;
/** A first start may stay silent this long (a package runner installing) and is never cut off meanwhile (MCP-05). */
export const MCP_FIRST_START_MS = 10 * 60 * 1000;

/** The key of an app's server in mcp.json: `<app>:<server>` (MCP-02). */
export function mcpKey(app: string, server: string): string {
  return `${app}:${server}`;
}

/**
 * What a server is, as the owner consented to it (MCP-07): transport, command, args, the env
 * names (never values) and a remote URL. Any change to one of these makes it another server.
 */
export interface McpDefinition {
  transport: "stdio" | "http";
  command: string | null;
  args: string[];
  envNames: string[];
  url: string | null;
}

/** The definition of one declared server, or null when the manifest does not declare it. */
export function mcpDefinition(manifest: Pick<AppManifest, "mcpServers">, server: string): McpDefinition | null {
  const declared = Object.hasOwn(manifest.mcpServers ?? {}, server) ? manifest.mcpServers![server] : undefined;
  if (!declared) return null;
  return {
    transport: declared.transport ?? "stdio",
    command: declared.command ?? null,
    args: [...(declared.args ?? [])],
    envNames: Object.keys(declared.env ?? {}).sort(),
    url: declared.url ?? null,
  };
}

/** sha256 over the canonical JSON of a definition: what `mcp run` compares with the consented one. */
export async function mcpDefinitionDigest(definition: McpDefinition): Promise<string> {
  return `sha256:${await sha256Hex(new TextEncoder().encode(canonicalJson(definition)))}`;
}

/** The host:port of a remote server, when the app's network grant allows it; else why not. */
export function remoteServerHost(definition: McpDefinition): { host: string; port: number } | null {
  return definition.url === null ? null : mcpRemoteHost(definition.url);
}

export const McpStartSchema = z.object({
  at: z.string(),
  ok: z.boolean(),
  exitCode: z.number().int().nullable(),
  /** The line of its error output that says why (the last non-empty one), or what refused it. */
  reason: z.string().max(500).nullable(),
});
export type McpStart = z.infer<typeof McpStartSchema>;

/** One registered server as GET /api/mcp shows it. */
export const McpServerViewSchema = z.strictObject({
  key: z.string(),
  app: z.string(),
  server: z.string(),
  transport: z.enum(["stdio", "http"]),
  /** registered: in mcp.json and startable; off: the owner turned it off; failing: 3 failed starts, waits for Retry; app_disabled; starting. */
  state: z.enum(["registered", "off", "failing", "app_disabled", "starting"]),
  ownerEnabled: z.boolean(),
  failedStarts: z.number().int(),
  lastStart: McpStartSchema.nullable(),
  definitionDigest: z.string(),
});
export type McpServerView = z.infer<typeof McpServerViewSchema>;

/** The CLI's `mcp run` asks the gateway whether it may start a server (POST /api/internal/mcp/:app/:server/launch). */
export const McpLaunchRequestSchema = z.object({ definitionDigest: z.string().max(200) }).strict();

/** What the gateway answers a launch it allows: the consented definition and what the sandbox needs. */
export const McpLaunchAnswerSchema = z.object({
  app: z.string(),
  server: z.string(),
  command: z.string(),
  args: z.array(z.string()),
  env: z.record(z.string(), z.string()),
  hasStorage: z.boolean(),
  network: z.array(z.string()),
  /** Identifies this start when its outcome is reported. */
  startId: z.string(),
  /** The install the owner consented to that this start runs: an update ends the server (alive). */
  consentDigest: z.string(),
  /** The folders the owner granted the app (bound at /folders/<need>), and their stamp: a change ends the server (alive). */
  folders: z.array(FolderGrantSchema).optional(),
  foldersStamp: z.string().optional(),
});
export type McpLaunchAnswer = z.infer<typeof McpLaunchAnswerSchema>;

/** What `mcp run` names when it asks whether its server may go on: the install it was started for. */
export const McpAliveQuerySchema = z
  .object({ consent: z.string().max(200).optional(), folders: z.string().max(64).optional() })
  .strict();

/** The outcome of one start, reported by `mcp run` (POST /api/internal/mcp/:app/:server/started). */
export const McpStartReportSchema = z
  .object({
    startId: z.string().max(100),
    ok: z.boolean(),
    exitCode: z.number().int().nullable(),
    reason: z.string().max(500).nullable(),
  })
  .strict();

/** The bridge's answer to a registration: the keys written and the servers left out with why. */
export const McpRegistrationSchema = z.object({
  registered: z.array(z.string()),
  skipped: z.array(z.object({ key: z.string(), reason: z.string() })),
  removed: z.array(z.string()),
});
export type McpRegistration = z.infer<typeof McpRegistrationSchema>;

/** Whether a running server may go on (GET /api/internal/mcp/:app/:server/alive); else why not (MCP-01). */
export const McpAliveAnswerSchema = z.object({ alive: z.boolean(), reason: z.string().nullable() });
export type McpAliveAnswer = z.infer<typeof McpAliveAnswerSchema>;
