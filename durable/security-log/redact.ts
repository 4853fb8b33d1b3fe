// Redaction before a row is written: no row carries a token, secret, cookie or signature
// value. Values under credential-naming keys are masked whole; every string (and every key)
// is masked for credential shapes and for the exact values the caller saw; a masker that
// throws withholds the text, since a failed mask proves nothing about what the text holds.
// The masking and escaping rules themselves are the shared text-safety module's.
import {
  escapeControls,
  maskCredentialShapes,
  maskExactValues,
  MASK,
  MIN_SECRET_CHARS,
} from "../../kernel/text/text-safety";
import type { JsonObject, JsonValue } from "../../kernel/crypto/canonical-json";
import { setMember } from "./json-value";

/** What a masked value becomes: the one marker of the text-safety module. */
export const REDACTED = MASK;
export const WITHHELD = "[withheld]";

/** Longest stored string, in UTF-16 code units, before the marker (SEL-05). */
export const MAX_TEXT_CHARS = 500;

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

/** A masker that removes each exact value the caller saw, wherever it appears, longest first. */
export function exactValueMasker(secrets: readonly string[] | undefined): TextMasker | null {
  if (!(secrets ?? []).some((value) => value.length >= MIN_SECRET_CHARS)) return null;
  return (text) => maskExactValues(text, secrets);
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

/**
 * Cuts a text at MAX_TEXT_CHARS with a marker saying how much was left out, never between the
 * two halves of a surrogate pair: a lone half cannot be stored as UTF-8, so the stored text
 * would differ from the text MACed and an honest row would fail verification.
 */
export function truncateText(text: string): string {
  if (text.length <= MAX_TEXT_CHARS) return text;
  const last = text.charCodeAt(MAX_TEXT_CHARS - 1);
  const cut = last >= 0xd800 && last <= 0xdbff ? MAX_TEXT_CHARS - 1 : MAX_TEXT_CHARS;
  return `${text.slice(0, cut)}…[+${text.length - cut} chars]`;
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
  return truncateText(escapeControls(maskOrWithhold(subject, maskerList(options))));
}

/** Masks a principal's free part (`internal:<work>` names come from a request header). */
export function redactPrincipal(principal: string, options: RedactionOptions = {}): string {
  return maskOrWithhold(principal, maskerList(options));
}
