// The record of the .mcpb bundle an app was generated from (mcpb-bundle.json in the generated
// app folder): which file, pinned by its sha256, who says they published it, what it declares it
// runs on, whether it carries a signature and what became of each user_config field. The bridge
// writes it when it turns a bundle into an app and reads it back from the staged bytes for the
// review, so the consent digest covers it like every file. Imports nothing but zod.
import { z } from "zod";

export const MCPB_BUNDLE_FILE = "mcpb-bundle.json";

/**
 * What is known of the bundle's signature. PersonalClaw does not verify MCPB signatures: a
 * bundle with a signature block is "signed-unverified", never presented as verified.
 */
export const McpbSignatureStateSchema = z.enum(["unsigned", "signed-unverified"]);
export type McpbSignatureState = z.infer<typeof McpbSignatureStateSchema>;

/** One user_config field and what the generated app made of it, in words the review shows. */
export const McpbUserConfigUseSchema = z
  .object({
    key: z.string().max(128),
    type: z.string().max(32),
    title: z.string().max(500),
    /** e.g. "the folder need x at /folders/x", "value 10 (its default)", "left unset (optional)". */
    becomes: z.string().max(1000),
  })
  .strict();

export const McpbBundleRecordSchema = z
  .object({
    /** Where the owner named it: the path or the https:// URL as typed. */
    source: z.string().max(4096),
    /** sha256 (hex) of the whole .mcpb file as read, signature block included. */
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    bytes: z.number().int().nonnegative(),
    manifestVersion: z.string().max(16),
    name: z.string().max(500),
    version: z.string().max(128),
    /** The manifest's author: a claim of the bundle, not a proven identity. */
    author: z.string().max(1000),
    serverType: z.enum(["node", "python", "binary"]),
    /** The compatibility it declares (clients, platforms, runtimes), as `key: value` lines; none: []. */
    compatibility: z.array(z.string().max(500)).max(64),
    signature: McpbSignatureStateSchema,
    userConfig: z.array(McpbUserConfigUseSchema).max(64),
    files: z.number().int().nonnegative(),
    unpackedBytes: z.number().int().nonnegative(),
  })
  .strict();
export type McpbBundleRecord = z.infer<typeof McpbBundleRecordSchema>;

/** The review's sentence for each signature state: what was and was not checked. */
export const MCPB_SIGNATURE_WORDS: Readonly<Record<McpbSignatureState, string>> = {
  unsigned: "unsigned: the bundle carries no signature",
  "signed-unverified":
    "signed, signature not verified: the bundle carries a signature block that PersonalClaw does not check; treat the publisher as unproven",
};
