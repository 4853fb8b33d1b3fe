// Where a declared secret goes and whether the app holds it (issue 38). A secret with `use`
// names the https origins that receive it and the one place in a request it is written (a
// header in a format, HTTP Basic credentials, or a query parameter); by default its app then
// gets a placeholder, and its egress broker writes the value into requests to those origins
// only. The manifest check, the review, the bridge and the broker read these rules from here.
// Imports nothing but zod.
import { z } from "zod";
import { grantAllows, grantPatterns, type NetworkGrant } from "../rules/network-grant";
import { refusal, invalidField, type ManifestRefusal } from "./manifest-refusal";
import { SECRET_ORIGINS_MAX } from "./secrets";

/** The mark in a header format where the value goes. */
export const VALUE_MARK = "{value}";

/** A header name (an RFC 9110 token), at most 64 characters. */
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/;
/** Headers a secret may never be written to: they frame the message or belong to one hop. */
const FRAMING_HEADERS = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "te",
  "trailer",
  "upgrade",
  "expect",
]);

export const SecretOriginUseSchema = z
  .object({
    origins: z.array(z.string().max(300)).min(1).max(SECRET_ORIGINS_MAX).meta({
      description:
        "The https origins that receive the value (`https://api.example.com`, `https://host:8443`); each must be covered by `permissions.network`. The app sends its requests to the `http://` form of the origin through its egress broker, which opens the TLS connection itself.",
      owner: "Every origin that receives the secret.",
    }),
    header: z
      .string()
      .regex(HEADER_NAME, "must be a header name")
      .meta({ description: "The request header the value is written to (`Authorization`).", owner: "The header." })
      .optional(),
    format: z
      .string()
      .min(VALUE_MARK.length)
      .max(200)
      .meta({
        description: "With `header`: the header's value, `{value}` standing for the secret (`Bearer {value}`).",
        owner: "The format.",
        byDefault: "`{value}`",
      })
      .optional(),
    basic: z
      .literal(true)
      .meta({
        description:
          "The value is sent in HTTP Basic credentials: the app writes the placeholder as the user name or the password of its `Authorization: Basic` header.",
        owner: "That it goes in Basic credentials.",
      })
      .optional(),
    query: z
      .string()
      .regex(/^[A-Za-z0-9_.~-]{1,64}$/, "must be a query parameter name")
      .meta({ description: "The query parameter the value is written to (`api_key`).", owner: "The parameter." })
      .optional(),
  })
  .strict();
export type SecretOriginUse = z.infer<typeof SecretOriginUseSchema>;

/** How a secret reaches its app: a placeholder the broker replaces, or the value itself in its environment. */
export const SecretDeliverySchema = z.enum(["placeholder", "env"]);
export type SecretDelivery = z.infer<typeof SecretDeliverySchema>;

/** The declaration fields these rules read. */
export interface SecretDeclaration {
  name: string;
  use?: SecretOriginUse | undefined;
  delivery?: SecretDelivery | undefined;
}

/** A placeholder when the secret says where it is used, the value itself otherwise, unless the manifest says which. */
export function secretDelivery(secret: SecretDeclaration): SecretDelivery {
  return secret.delivery ?? (secret.use ? "placeholder" : "env");
}

/** An origin as the broker dials it: the name or address (IPv6 without brackets), its real port, and the http:// form the app sends to. */
export interface SecretOrigin {
  origin: string;
  host: string;
  port: number;
  /** The base URL the app uses: `http://host` for port 443, `http://host:port` for any other. */
  plainBase: string;
}

/** A DNS name as the URL parser writes it (lower case, punycode), labels of letters, digits and inner hyphens. */
const DNS_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** Parses `https://host[:port]` written in its one normal form; a reason otherwise. */
export function parseSecretOrigin(text: string): SecretOrigin | { error: string } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { error: "is not an https origin such as https://api.example.com" };
  }
  if (url.protocol !== "https:") return { error: "must be an https:// origin: the value never travels in clear" };
  // One spelling only (no path, login, query, default port or upper case): what the owner reads is what is matched.
  if (url.origin !== text)
    return {
      error: `must be written as its origin alone${url.origin.startsWith("https://") ? ` (${url.origin})` : ""}`,
    };
  // A host is a name of DNS labels or an address: the URL parser also takes `*.example.com` or a
  // trailing dot, a second spelling of a granted name that a wildcard grant would let through.
  if (!DNS_NAME.test(url.hostname) && !/^[\d.]+$|^\[[\da-f:.]+\]$/.test(url.hostname))
    return { error: "must name a host of letters, digits and hyphens, or an address" };
  const port = url.port === "" ? 443 : Number(url.port);
  return {
    origin: url.origin,
    host: url.hostname.replace(/^\[|\]$/g, ""),
    port,
    plainBase: `http://${url.hostname}${port === 443 ? "" : `:${port}`}`,
  };
}

/**
 * The origins a secret's value is written to for one app: the ones the owner set when assigning
 * it, where set, else its manifest's `use.origins`; only those that parse (the manifest check
 * and the assignment refused any other).
 */
export function secretOrigins(secret: SecretDeclaration, ownerSet?: readonly string[]): SecretOrigin[] {
  return (ownerSet ?? secret.use?.origins ?? [])
    .map(parseSecretOrigin)
    .filter((o): o is SecretOrigin => !("error" in o));
}

/** Why the owner may not send an app's copy of this secret to `origins`, or null when they may. */
export type OwnerOriginsRefusal =
  | { code: "secret_origins_not_brokered"; vars: { name: string } }
  | { code: "secret_origin_invalid"; vars: { origin: string; reason: string } }
  | { code: "secret_origin_not_granted"; vars: { origin: string; app: string } };

/**
 * The owner's choice of origins for a secret its app never holds (issue 38): each an https
 * origin in its normal form, named once, and covered by the network grant the owner consented
 * to for the app — the broker reaches nothing else, so an origin outside it would be a promise
 * the broker cannot keep. A secret the app holds (`delivery: "env"`) goes wherever the app
 * sends it; choosing its origins would mislead, so it is refused.
 */
export function ownerOriginsRefusal(
  app: string,
  secret: SecretDeclaration,
  origins: readonly string[],
  network: NetworkGrant | undefined,
): OwnerOriginsRefusal | null {
  if (!secret.use || secretDelivery(secret) !== "placeholder")
    return { code: "secret_origins_not_brokered", vars: { name: secret.name } };
  const grant = grantPatterns(network);
  const seen = new Set<string>();
  for (const text of origins) {
    const origin = parseSecretOrigin(text);
    const shown = text.slice(0, 300);
    if ("error" in origin) return { code: "secret_origin_invalid", vars: { origin: shown, reason: origin.error } };
    if (seen.has(origin.origin))
      return { code: "secret_origin_invalid", vars: { origin: shown, reason: "is named twice" } };
    seen.add(origin.origin);
    if (!grantAllows(grant, origin.host.toLowerCase(), origin.port))
      return { code: "secret_origin_not_granted", vars: { origin: origin.origin, app } };
  }
  return null;
}

/** The variable holding the http:// base URL of a placeholder secret's first origin. */
export function originVariable(secretName: string): string {
  return `PERSONALCLAW_ORIGIN_${secretName}`;
}

/** Where in a request the value is written, as the owner reads it. */
export function secretPlaceWords(use: SecretOriginUse): string {
  if (use.basic) return "HTTP Basic credentials";
  if (use.query !== undefined) return `query parameter ${use.query}`;
  return `header ${use.header}: ${use.format ?? VALUE_MARK}`;
}

/**
 * The review's one sentence for a secret: who holds it, and which hosts receive it where —
 * `ownerSet` the origins the owner chose in place of the declared ones, if any.
 */
export function secretHoldingWords(secret: SecretDeclaration, ownerSet?: readonly string[]): string {
  const to = secret.use
    ? ` It is sent to ${(ownerSet ?? secret.use.origins).join(", ")} in ${secretPlaceWords(secret.use)}${ownerSet ? " (origins you set)" : ""}.`
    : " Where it is sent is not declared.";
  return secretDelivery(secret) === "placeholder"
    ? `The app never sees this value: it gets a placeholder, and its egress broker writes the value into requests to ${ownerSet ? "those" : "the declared"} origins only.${to}`
    : `The app holds this value: it can send it to any host its network grant allows.${to}`;
}

/** Why a `use` is malformed beyond its field shapes, or null. */
function useShapeRefusal(use: SecretOriginUse): string | null {
  const places = [use.header !== undefined, use.basic === true, use.query !== undefined].filter(Boolean).length;
  if (places !== 1) return "must name exactly one place for the value: header, basic or query";
  if (use.format !== undefined && use.header === undefined) return "format is only for a header";
  if (use.header !== undefined && FRAMING_HEADERS.has(use.header.toLowerCase()))
    return `'${use.header}' frames the request; a secret cannot be written there`;
  if (use.header !== undefined && use.header.toLowerCase().startsWith("proxy-"))
    return `'${use.header}' belongs to the proxy hop; a secret cannot be written there`;
  const format = use.format ?? VALUE_MARK;
  if (format.split(VALUE_MARK).length !== 2) return "format must hold {value} exactly once";
  if (!/^[\x20-\x7e]+$/.test(format)) return "format must be printable ASCII";
  return null;
}

/**
 * A secret's `use` and `delivery` hold together: one place for the value, https origins in
 * their normal form, each covered by `permissions.network` (refused with
 * manifest_secret_origin_not_granted otherwise), and a placeholder only where there is a use.
 */
export function checkSecretUses(
  secrets: readonly SecretDeclaration[],
  network: NetworkGrant | undefined,
): ManifestRefusal | null {
  const grant = grantPatterns(network);
  for (const [i, secret] of secrets.entries()) {
    if (!secret.use) {
      if (secret.delivery === "placeholder")
        return invalidField(`secrets[${i}].delivery`, "a placeholder needs `use`: the origins that receive the value");
      continue;
    }
    const shape = useShapeRefusal(secret.use);
    if (shape) return invalidField(`secrets[${i}].use`, shape);
    const seen = new Set<string>();
    for (const [j, text] of secret.use.origins.entries()) {
      const field = `secrets[${i}].use.origins[${j}]`;
      const origin = parseSecretOrigin(text);
      if ("error" in origin) return invalidField(field, `'${text}' ${origin.error}`);
      if (seen.has(origin.origin)) return invalidField(field, `'${text}' is named twice`);
      seen.add(origin.origin);
      if (!grantAllows(grant, origin.host.toLowerCase(), origin.port))
        return refusal("manifest_secret_origin_not_granted", field, { origin: origin.origin });
    }
  }
  return null;
}
