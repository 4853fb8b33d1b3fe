// Redaction before a row is written: no row carries a token, secret, cookie or signature
// value. Values under credential-naming keys are masked whole; every string (and every key)
// is masked for credential shapes and for the exact values the caller saw; a masker that
// throws withholds the text, since a failed mask proves nothing about what the text holds.
import { setMember, type JsonObject, type JsonValue } from "./canonical-json";

export const REDACTED = "[redacted]";
export const WITHHELD = "[withheld]";

/** Longest stored string, in UTF-16 code units, before the marker (SEL-05). */
export const MAX_TEXT_CHARS = 500;

/** A caller-supplied credential shorter than this is ignored: masking it would shred the row. */
export const MIN_SECRET_CHARS = 4;

export type TextMasker = (text: string) => string;

// A key names a credential when it is one of these exactly, when any of its words is a
// "strong" word, or when its last word is a "weak" one (`session_token`, `apiKey`) — so
// `token_kind` or `key_id` describe a credential without holding it and stay readable.
const CREDENTIAL_KEYS_EXACT = new Set([
  "api_key",
  "app_token",
  "x-internal-secret",
  "x-local-secret",
  "x-personalclaw-proxy",
  "set-cookie",
]);
const CREDENTIAL_WORDS_ANYWHERE = new Set([
  "password",
  "passwd",
  "passphrase",
  "secret",
  "secrets",
  "cookie",
  "cookies",
  "authorization",
  "credential",
  "credentials",
]);
const CREDENTIAL_WORDS_LAST = new Set(["token", "tokens", "key", "apikey", "signature", "sig"]);

/** True when a detail key names a credential, case-insensitively (see the word rules above). */
export function isCredentialKey(key: string): boolean {
  if (CREDENTIAL_KEYS_EXACT.has(key.toLowerCase())) return true;
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 0);
  if (words.some((word) => CREDENTIAL_WORDS_ANYWHERE.has(word))) return true;
  const last = words[words.length - 1];
  return last !== undefined && CREDENTIAL_WORDS_LAST.has(last);
}

// --- shape maskers -------------------------------------------------------------------

const HOST_AFTER_AT = /^[A-Za-z0-9.\-[\]]+(?::\d+)?(?:[/?#]|$)/;

/** Masks the login of every `scheme://user:pass@host` (and `scheme://token@host`), up to the last @ before the host. */
export function maskUrlCredentials(text: string): string {
  return text.replace(/([A-Za-z][A-Za-z0-9+.-]*:\/\/)(\S+)/g, (whole, scheme: string, rest: string) => {
    const delimiter = rest.search(/[/?#]/);
    const authorityEnd = delimiter === -1 ? rest.length : delimiter;
    let at = rest.lastIndexOf("@", authorityEnd - 1);
    if (at === -1) {
      // A password holding '/', '?' or '#' cuts the authority short: then the login runs to
      // the last '@' that a host name follows, if the cut part looks like `user:...`.
      if (!/^[^@/?#]*:[^\d/?#]/.test(rest)) return whole;
      at = -1;
      for (let i = rest.indexOf("@"); i !== -1; i = rest.indexOf("@", i + 1)) {
        if (HOST_AFTER_AT.test(rest.slice(i + 1))) at = i;
      }
      if (at === -1) return whole;
    }
    return `${scheme}${REDACTED}${rest.slice(at)}`;
  });
}

/** scp-style `user:password@host:path` (no scheme) has its login masked the same way. */
function maskScpLogin(text: string): string {
  return text.replace(/(^|[\s"'(=])[^\s:@/"'(]+:[^\s@]+@(?=[A-Za-z0-9.-]+:)/g, `$1${REDACTED}@`);
}

const SHAPE_PATTERNS: Array<[RegExp, string]> = [
  // An Authorization-header value: `Bearer xxx`, whatever the token's own shape.
  [/\b(Bearer)(\s+)[A-Za-z0-9._~+/=-]{4,}/gi, `$1$2${REDACTED}`],
  // JWT: three base64url parts, the first an encoded JSON object.
  [/\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g, REDACTED],
  // Vendor-shaped keys (secret-detection data, kept deliberately): sk-, GitHub, Slack.
  [/\bsk-[A-Za-z0-9_-]{8,}/g, REDACTED],
  [/\bgh[pousr]_[A-Za-z0-9]{16,}/g, REDACTED],
  [/\bxox[abposr]-[A-Za-z0-9-]{8,}/g, REDACTED],
  // `id.secret` tokens: 16+ url-safe characters, a dot, 20+ url-safe characters.
  [/(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{20,}(?![A-Za-z0-9_-])/g, REDACTED],
  // 32+ hex characters: raw keys, secrets, signatures. A content digest labelled `sha256:`
  // (a consent digest) names bytes anyone can hash; it is evidence, not a credential.
  [/(?<![0-9A-Fa-f])(?<!sha256:)[0-9A-Fa-f]{32,}(?![0-9A-Fa-f])/g, REDACTED],
];

/** Masks credential shapes in a text (URL logins first, then the patterns above). */
export function maskCredentialShapes(text: string): string {
  let out = maskScpLogin(maskUrlCredentials(text));
  for (const [pattern, replacement] of SHAPE_PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

/** A masker that removes each exact value the caller saw, wherever it appears, longest first. */
export function exactValueMasker(secrets: readonly string[] | undefined): TextMasker | null {
  const values = [...new Set((secrets ?? []).filter((value) => value.length >= MIN_SECRET_CHARS))];
  if (values.length === 0) return null;
  values.sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text;
    for (const value of values) if (out.includes(value)) out = out.split(value).join(REDACTED);
    return out;
  };
}

// --- applying the maskers ------------------------------------------------------------

/** Runs every masker over a text; if any throws, the whole text is withheld. */
export function maskOrWithhold(text: string, maskers: readonly TextMasker[]): string {
  try {
    let out = text;
    for (const mask of maskers) out = mask(out);
    return out;
  } catch {
    return WITHHELD;
  }
}

/** Cuts a text at MAX_TEXT_CHARS with a marker saying how much was left out. */
export function truncateText(text: string): string {
  if (text.length <= MAX_TEXT_CHARS) return text;
  return `${text.slice(0, MAX_TEXT_CHARS)}…[+${text.length - MAX_TEXT_CHARS} chars]`;
}

/** One line: every control character becomes a visible escape (a subject is shown as one line). */
export function escapeControlCharacters(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (ch) => {
    if (ch === "\n") return "\\n";
    if (ch === "\r") return "\\r";
    if (ch === "\t") return "\\t";
    return `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`;
  });
}

export interface RedactionOptions {
  /** Raw credential values the caller saw in the request; masked even as substrings. */
  secrets?: readonly string[];
  /** Replaces the default shape masker list (tests inject a throwing one). */
  maskers?: readonly TextMasker[];
}

function maskerList(options: RedactionOptions): TextMasker[] {
  const exact = exactValueMasker(options.secrets);
  const rest = options.maskers ?? [maskCredentialShapes];
  return exact ? [exact, ...rest] : [...rest];
}

function redactValue(value: JsonValue, maskers: readonly TextMasker[]): JsonValue {
  if (typeof value === "string") return truncateText(maskOrWithhold(value, maskers));
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => redactValue(item, maskers));
  const out: JsonObject = {};
  for (const [key, member] of Object.entries(value)) {
    let safeKey = truncateText(maskOrWithhold(key, maskers));
    for (let n = 2; Object.hasOwn(out, safeKey); n++) safeKey = `${safeKey}#${n}`;
    if (isCredentialKey(key)) {
      // A boolean or null cannot carry a credential (`has_token: true` stays readable).
      setMember(out, safeKey, member === null || typeof member === "boolean" ? member : REDACTED);
    } else {
      setMember(out, safeKey, redactValue(member, maskers));
    }
  }
  return out;
}

/** Masks a detail object recursively: credential keys, credential shapes, exact values. */
export function redactDetail(detail: JsonObject, options: RedactionOptions = {}): JsonObject {
  return redactValue(detail, maskerList(options)) as JsonObject;
}

/** Masks a subject and stores it as one bounded line (SEL-05). */
export function redactSubject(subject: string, options: RedactionOptions = {}): string {
  return truncateText(escapeControlCharacters(maskOrWithhold(subject, maskerList(options))));
}

/** Masks a principal's free part (`internal:<work>` names come from a request header). */
export function redactPrincipal(principal: string, options: RedactionOptions = {}): string {
  return maskOrWithhold(principal, maskerList(options));
}
