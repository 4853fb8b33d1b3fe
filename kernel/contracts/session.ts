// Contracts between the worker and the SessionStore Durable Object.
import { z } from "zod";
import { escapeControls } from "../text/text-safety";

export const SIGN_OUT_REASONS = [
  "signed_out",
  "signed_out_elsewhere",
  "signed_out_others",
  "signed_out_everywhere",
  "limit",
  "replaced",
  "superseded",
  "key_replaced",
  "ended",
] as const;
export const REFUSAL_REASONS = [...SIGN_OUT_REASONS, "expired", "link_expired", "link_used", "not_signed_in"] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

export type SessionKind = "browser" | "token" | "app";

export interface SessionView {
  id: string;
  kind: SessionKind;
  app: string | null;
  issuer: string;
  createdAt: number;
  lastUsedAt: number;
  expiresAt: number;
  signedInAt: number;
  /** The owner's name for this device, or null. */
  name: string | null;
  /** The User-Agent header of the browser that opened the link (a claim, shown as text). */
  userAgent: string | null;
  /** The first address that used it: where a link was opened from, or where a browser signed in. */
  firstAddress: string | null;
}

export type CheckResult = { ok: true; session: SessionView } | { ok: false; reason: RefusalReason; at: number | null };

export type LinkResult =
  { ok: true; browserToken: string; session: SessionView } | { ok: false; reason: RefusalReason; at: number | null };

export interface MintedToken {
  token: string;
  session: SessionView;
  openWithin: number;
}

export const MAX_TTL_MS = 90 * 24 * 3600 * 1000;
export const DEFAULT_TOKEN_TTL_MS = 20 * 3600 * 1000;
export const BROWSER_SESSION_TTL_MS = 30 * 24 * 3600 * 1000;
export const LINK_OPEN_WINDOW_MS = 24 * 3600 * 1000;
export const APP_TOKEN_TTL_MS = 3600 * 1000;
export const PRESENCE_WINDOW_MS = 10 * 60 * 1000;
export const SESSION_LIMITS = { browser: 20, token: 20, app: 20 } as const;

/** A duration like 30m, 20h or 7d, in milliseconds; `invalid` or `too_long` otherwise. */
export function parseTtl(
  text: string,
): { ok: true; ms: number } | { ok: false; code: "token_ttl_invalid" | "token_ttl_too_long" } {
  const match = /^([1-9][0-9]{0,5})([smhd])$/.exec(text.trim());
  if (!match) return { ok: false, code: "token_ttl_invalid" };
  const unit = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] as "s" | "m" | "h" | "d"];
  const ms = Number(match[1]) * unit;
  return ms > MAX_TTL_MS ? { ok: false, code: "token_ttl_too_long" } : { ok: true, ms };
}

/** Says a lifetime in words: "30 minutes", "20 hours", "7 days". */
export function describeDuration(ms: number): string {
  const units: Array<[number, string]> = [
    [86_400_000, "day"],
    [3_600_000, "hour"],
    [60_000, "minute"],
    [1000, "second"],
  ];
  for (const [size, name] of units) {
    if (ms % size === 0 && ms >= size) {
      const count = ms / size;
      return `${count} ${name}${count === 1 ? "" : "s"}`;
    }
  }
  return `${Math.round(ms / 1000)} seconds`;
}

export const TokenQuerySchema = z.object({ ttl: z.string().optional() }).strict();

/**
 * What a sign-in link is, in the words `personalclaw token` and start can print: an owner
 * credential for its whole lifetime (a browser it signs in, and a script's Bearer), bound to
 * the first address that opens it, and how to end it.
 */
export function describeSignInLink(lastsMs: number, expiresAt: string, openWithinMs: number): string {
  const window =
    openWithinMs >= lastsMs
      ? ""
      : ` A browser must first open it within ${describeDuration(openWithinMs)}; after that it opens no new sign-in.`;
  return (
    `This link is an owner credential for ${describeDuration(lastsMs)} (until ${expiresAt}), not a one-time code: ` +
    `opening it signs a browser in for at most that long, and it works as a Bearer token for scripts.${window} ` +
    "The first address that opens it keeps it; from any other address it is refused. " +
    "End it on the dashboard's Devices page, or end every sign-in with `personalclaw auth rotate-key`."
  );
}

/** What minting an owner token answers (GET /api/token/local, the startup link). */
export const MintedTokenAnswerSchema = z.strictObject({
  token: z.string(),
  url: z.string(),
  expires_in: z.number().int(),
  expires_at: z.string(),
  open_within: z.number().int(),
  lasts: z.string(),
  explains: z.string(),
});

/** The longest name the owner may give a device, in characters. */
export const DEVICE_NAME_MAX_CHARS = 64;

/**
 * A device name as the owner typed it, trimmed; "invalid" when it is empty, longer than the
 * limit, or holds a control, format or bidi character (it could make one row look like another)
 * or a backslash (it would read like one of the visible escapes the dashboard shows).
 */
export function parseDeviceName(value: string): string | "invalid" {
  const name = value.trim();
  if (name.length === 0 || [...name].length > DEVICE_NAME_MAX_CHARS) return "invalid";
  return escapeControls(name) === name && !name.includes("\\") ? name : "invalid";
}

export const DeviceNameBodySchema = z.object({ name: z.string().max(1024).nullable() }).strict();
