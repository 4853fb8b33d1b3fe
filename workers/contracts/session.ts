// Contracts between the worker and the SessionStore Durable Object.
import { z } from "zod";

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
