// Write-only secrets (SECR-01/02): the name rules and every message about them that crosses a
// process. A value travels one way only — from the owner, through the gateway, to the host
// bridge, which seals it; no schema here carries a value back.
import { z } from "zod";
import { APP_NAME_PATTERN } from "../rules/app-name";

/** A secret's name is also the environment variable its app receives, so it is one. */
export const SECRET_NAME = /^[A-Z][A-Z0-9_]{0,63}$/;
/** Where PersonalClaw keeps a setting's own key and a project's secrets (SECR-02). */
export const RESERVED_SECRET_PREFIXES = ["PCSECRET_", "PCPROJ_"] as const;
export const SECRET_VALUE_MAX_CHARS = 8192;

/**
 * Names an app may not declare: the ones the bridge sets for every child itself, the ones
 * that steer its loader, interpreter or network, and the reserved prefixes. A secret named
 * PATH or NODE_OPTIONS would otherwise rewrite what runs.
 */
const NOT_DECLARABLE = new Set([
  "PATH",
  "HOME",
  "TMPDIR",
  "PORT",
  "LANG",
  "LANGUAGE",
  "TZ",
  "SHELL",
  "USER",
  "LOGNAME",
  "NODE_OPTIONS",
  "NODE_PATH",
  "NODE_EXTRA_CA_CERTS",
  "PYTHONPATH",
  "PYTHONHOME",
  "PYTHONSTARTUP",
  "PYTHONPYCACHEPREFIX",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "ALL_PROXY",
  "NO_PROXY",
  "FTP_PROXY",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "REQUESTS_CA_BUNDLE",
  "CURL_CA_BUNDLE",
  "GIT_SSL_CAINFO",
  "GIT_SSL_CAPATH",
]);

export function isReservedSecretName(name: string): boolean {
  return RESERVED_SECRET_PREFIXES.some((prefix) => name.startsWith(prefix));
}

/** Why an app may not declare this secret name, or null when it may. */
export function declaredSecretNameRefusal(name: string): string | null {
  if (!SECRET_NAME.test(name)) return "must be 1 to 64 capital letters, digits and underscores, starting with a letter";
  if (isReservedSecretName(name)) return "begins with a reserved prefix (PCSECRET_, PCPROJ_)";
  if (
    name.startsWith("PERSONALCLAW_") ||
    name.startsWith("LD_") ||
    name.startsWith("XDG_") ||
    name.startsWith("LC_") ||
    name.startsWith("PIP_") ||
    name.startsWith("NPM_CONFIG_")
  ) {
    return "begins with a prefix the bridge or a loader reads";
  }
  if (NOT_DECLARABLE.has(name)) return "is a variable the bridge sets or a loader reads";
  return null;
}

/** The most origins a secret may be sent to, declared or set by the owner. */
export const SECRET_ORIGINS_MAX = 8;
/** The origins the owner set for one app's copy of a secret, in place of the ones its manifest declared (issue 38). */
export const OwnerSecretOriginsSchema = z.array(z.string().max(300)).min(1).max(SECRET_ORIGINS_MAX);

/** One app's binding of a stored secret: under the name the app declared, and the origins the owner set for it, if any. */
export const SecretUseSchema = z.object({
  app: z.string(),
  as: z.string(),
  origins: OwnerSecretOriginsSchema.optional(),
});

/** What GET /api/secrets lists: names, presence and consumers — never a value (SECR-01). */
export const SecretListingSchema = z.object({
  secrets: z.array(z.object({ name: z.string(), stored: z.boolean(), used_by: z.array(SecretUseSchema) })),
});
export type SecretListing = z.infer<typeof SecretListingSchema>;

/** An app's identity as a secret is bound to it: its name and the consent digest of its install. */
export const SecretConsumerSchema = z.object({
  app: z.string().regex(APP_NAME_PATTERN).max(64),
  digest: z.string().max(200),
});
export type SecretConsumer = z.infer<typeof SecretConsumerSchema>;

const secretName = z.string().regex(SECRET_NAME);

export const SecretStoreRequestSchema = z
  .object({
    name: secretName,
    value: z.string().min(1).max(SECRET_VALUE_MAX_CHARS),
    /** Every installed app: a replaced value is sealed again for each app it is assigned to. */
    consumers: z.array(SecretConsumerSchema).max(10_000),
  })
  .strict();
export const SecretDeleteRequestSchema = z.object({ name: secretName }).strict();
export const SecretAssignRequestSchema = z
  .object({
    name: secretName,
    as: secretName,
    consumer: SecretConsumerSchema,
    origins: OwnerSecretOriginsSchema.optional(),
  })
  .strict();
export const SecretUnassignRequestSchema = z.object({ app: SecretConsumerSchema.shape.app, as: secretName }).strict();
/** At an update the owner consented to, an app's assigned secrets follow it to its new digest. */
export const SecretRebindRequestSchema = z
  .object({
    app: SecretConsumerSchema.shape.app,
    fromDigest: z.string().max(200),
    toDigest: z.string().max(200),
    declared: z.array(secretName).max(64),
  })
  .strict();

/** What GET /api/secrets answers: the bridge's listing, what each installed app asks for, and how a value reaches it. */
export const SecretsAnswerSchema = SecretListingSchema.extend({
  declared: z.array(
    z.object({
      app: z.string(),
      name: z.string(),
      why: z.string(),
      assigned: z.string().nullable(),
      holding: z.string(),
      /** The https origins the value is written to now (none for a secret its app holds). */
      origins: z.array(z.string()),
      /** Whether those are the manifest's `use.origins` or ones the owner set at assignment. */
      origins_from: z.enum(["manifest", "owner"]),
    }),
  ),
  delivery: z.string(),
});
/** What PUT /api/secrets/:name answers. */
export const SecretStoredAnswerSchema = z.object({ name: z.string(), stored: z.literal(true), replaced: z.boolean() });
/** What DELETE /api/secrets/:name answers: the apps it was taken back from. */
export const SecretDeletedAnswerSchema = z.object({ deleted: z.string(), unassigned: z.array(SecretUseSchema) });
/** What POST /api/secrets/:name/assign answers. */
export const SecretAssignedAnswerSchema = z.object({
  name: z.string(),
  app: z.string(),
  as: z.string(),
  /** For a placeholder secret: the origins its value is written to. */
  origins: z.array(z.string()),
  applies: z.string(),
});
