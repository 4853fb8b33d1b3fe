// The part of an MCPB manifest.json that PersonalClaw reads (the MCPB spec's MANIFEST.md,
// manifest_version 0.1 to 0.4): who made it, what it runs (`server` and its `mcp_config`), what
// it asks the user for (`user_config`) and where it says it runs (`compatibility`). Those fields
// are the same in every published version; 0.4 adds the `uv` server type, which is marked
// experimental there and is refused here. Keys it does not read (icons, tools, prompts,
// localization, _meta...) are left out, never trusted.
import { z } from "zod";
import { GatewayError } from "../../kernel/contracts/errors";
import { parseStrictJson } from "../../kernel/text/strict-json";

/** The manifest versions whose fields above are known; any other is refused. */
export const MCPB_MANIFEST_VERSIONS: readonly string[] = ["0.1", "0.2", "0.3", "0.4"];
/** manifest.json is a few KiB; a larger one is refused rather than parsed. */
const MAX_MANIFEST_BYTES = 1024 * 1024;

const text = (max: number) => z.string().max(max);

const McpConfigSchema = z.object({
  command: text(1024).min(1),
  args: z.array(text(4096)).max(256).optional(),
  env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "is not a variable name"), text(4096)).optional(),
});

export const McpbUserConfigOptionSchema = z.object({
  type: z.enum(["string", "number", "boolean", "directory", "file"]),
  title: text(500),
  description: text(2000),
  required: z.boolean().optional(),
  default: z.union([text(4096), z.number(), z.boolean(), z.array(text(4096)).max(64)]).optional(),
  multiple: z.boolean().optional(),
  sensitive: z.boolean().optional(),
  min: z.number().optional(),
  max: z.number().optional(),
});
export type McpbUserConfigOption = z.infer<typeof McpbUserConfigOptionSchema>;

export const McpbManifestSchema = z.object({
  manifest_version: text(16).optional(),
  dxt_version: text(16).optional(),
  name: text(200).min(1),
  display_name: text(200).optional(),
  version: text(64).min(1),
  description: text(2000),
  author: z.object({ name: text(500), email: text(500).optional(), url: text(2048).optional() }),
  server: z.object({
    type: z.enum(["node", "python", "binary", "uv"]),
    entry_point: text(1024).min(1),
    mcp_config: McpConfigSchema.extend({
      platform_overrides: z.record(text(32), McpConfigSchema.partial()).optional(),
    }).optional(),
  }),
  compatibility: z
    .object({
      platforms: z.array(text(32)).max(16).optional(),
      runtimes: z.record(text(32), text(200)).optional(),
    })
    .catchall(z.unknown())
    .optional(),
  user_config: z
    .record(z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/, "is not a plain key"), McpbUserConfigOptionSchema)
    .optional(),
});
export type McpbManifest = z.infer<typeof McpbManifestSchema>;

const invalid = (reason: string) => new GatewayError("mcpb_manifest_invalid", { vars: { reason } });

/** Parses manifest.json's bytes; throws mcpb_manifest_version_unsupported or mcpb_manifest_invalid. */
export function parseMcpbManifest(bytes: Buffer | undefined): McpbManifest & { manifestVersion: string } {
  if (bytes === undefined) throw invalid("the bundle has no manifest.json at its top");
  if (bytes.length > MAX_MANIFEST_BYTES) throw invalid(`it is larger than ${MAX_MANIFEST_BYTES} bytes`);
  const parsed = parseStrictJson(bytes.toString("utf8"));
  if (!parsed.ok) throw invalid(parsed.problem === "not_json" ? "it is not JSON" : parsed.reason);
  const raw = parsed.value as Record<string, unknown> | null;
  const version = typeof raw === "object" && raw !== null ? (raw.manifest_version ?? raw.dxt_version) : undefined;
  if (typeof version !== "string" || !MCPB_MANIFEST_VERSIONS.includes(version))
    throw new GatewayError("mcpb_manifest_version_unsupported", {
      vars: { version: String(version ?? "(none)").slice(0, 40) },
    });
  const manifest = McpbManifestSchema.safeParse(raw);
  if (!manifest.success) {
    const issue = manifest.error.issues[0]!;
    throw invalid(`${issue.path.join(".") || "manifest"}: ${issue.message}`);
  }
  return { ...manifest.data, manifestVersion: version };
}
