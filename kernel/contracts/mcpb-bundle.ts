// The record of the .mcpb bundle an app was generated from (mcpb-bundle.json in the generated
// app folder): which file, pinned by its sha256, who says they published it, what it declares it
// runs on, whether it carries a signature and what became of each user_config field. The bridge
// writes it when it turns a bundle into an app and reads it back from the staged bytes for the
// review, so the consent digest covers it like every file. Imports nothing but zod.
import { z } from "zod";

export const MCPB_BUNDLE_FILE = "mcpb-bundle.json";

/**
 * What is known of the bundle's signature: none ("unsigned"); a signature over every byte of the
 * bundle whose certificate chains to an authority the owner trusts ("verified") or to none
 * ("untrusted": shown, never presented as proof). A signature that does not sign the bundle's
 * bytes is refused (mcpb_signature_invalid) and never recorded. "signed-unverified" is what a
 * record kept before signatures were verified says.
 */
export const McpbSignatureStateSchema = z.enum(["unsigned", "verified", "untrusted", "signed-unverified"]);
export type McpbSignatureState = z.infer<typeof McpbSignatureStateSchema>;

/** Who signed, as the signer's certificate names them, and why it is not trusted when it is not. */
export const McpbSignerSchema = z
  .object({
    subject: z.string().max(500),
    issuer: z.string().max(500),
    /** SHA-256 of the certificate, colon-separated hex. */
    fingerprint: z.string().max(200),
    validFrom: z.string().max(40),
    validTo: z.string().max(40),
    reason: z.string().max(500).optional(),
  })
  .strict();
export type McpbSigner = z.infer<typeof McpbSignerSchema>;

/** A verified signature's outcome, as the verifier answers it. */
export type McpbSignature = McpbSigner & { state: "verified" | "untrusted" };

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
    /** The signer of a "verified" or "untrusted" signature; absent for an unsigned bundle. */
    signer: McpbSignerSchema.optional(),
    userConfig: z.array(McpbUserConfigUseSchema).max(64),
    files: z.number().int().nonnegative(),
    unpackedBytes: z.number().int().nonnegative(),
  })
  .strict();
export type McpbBundleRecord = z.infer<typeof McpbBundleRecordSchema>;

/** The review's sentence for each signature state: what was and was not checked; a signed one follows "signed by <subject>, ". */
export const MCPB_SIGNATURE_WORDS: Readonly<Record<McpbSignatureState, string>> = {
  unsigned: "unsigned: the bundle carries no signature",
  verified:
    "verified: the signature covers every byte of the bundle, and its certificate chains to an authority you trust",
  untrusted:
    "untrusted: the signature covers every byte of the bundle, but no authority you trust vouches for its certificate, so who signed it is unproven",
  "signed-unverified":
    "signed, signature not verified: the bundle carries a signature block that PersonalClaw does not check; treat the publisher as unproven",
};
