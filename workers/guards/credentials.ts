// Step 2: the one credential-selection rule (AUTH-07/10). Carriers: `?token=` (the
// browser's entry link, exchanged for a cookie before routing), the session cookie,
// `Authorization: Bearer` (stateless), `?app_token=` for an app page's own asset URLs, and,
// for the events socket only, the subprotocol `personalclaw.bearer.<token>`. Another
// Authorization scheme is ignored (AUTH-14). Each carrier is parsed once, in
// parsed-request.ts, and every reader takes that one parse.
import { GatewayError, type ErrorCode } from "../../kernel/contracts/errors";
import type { RefusalReason } from "../../kernel/contracts/session";
import { BEARER_SUBPROTOCOL_PREFIX } from "../../kernel/rules/event-names";

export interface PresentedCredentials {
  cookie: string | null;
  bearer: string | null;
  link: string | null;
  appToken: string | null;
}

/** The fallback session cookie name, for browsers that keep no Secure cookie over http. */
export function cookieName(port: string): string {
  return `pc_token_${port}`;
}

/**
 * The session cookie name browsers are asked to keep first. `__Host-` makes the browser
 * refuse any copy with a Path other than `/`, a Domain, or no Secure, so a page on a sibling
 * loopback port cannot plant a `Path=/api` copy that would be sent ahead of the owner's.
 */
export function hostCookieName(port: string): string {
  return `__Host-${cookieName(port)}`;
}

/** The Set-Cookie values that sign a browser in (`token`) or out (`token` null). */
export function sessionCookieHeaders(port: string, token: string | null, maxAgeSeconds: number): string[] {
  const value = token ?? "";
  const age = token === null ? 0 : maxAgeSeconds;
  return [
    `${hostCookieName(port)}=${value}; Secure; HttpOnly; SameSite=Lax; Path=/; Max-Age=${age}`,
    `${cookieName(port)}=${value}; HttpOnly; SameSite=Lax; Path=/; Max-Age=${age}`,
  ];
}

/** The parsed Authorization header: a Bearer token, another scheme (ignored), or none. */
export type ParsedAuthorization = { kind: "none" } | { kind: "bearer"; token: string } | { kind: "other-scheme" };

// RFC 6750 §2.1: credentials = "Bearer" 1*SP b64token; the scheme is case-insensitive (RFC 9110 §11.1).
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*)$/i;
const AUTH_SCHEME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+(?: |$)/;

/**
 * Parses Authorization strictly, once. Refused (400 `auth_header_malformed`): an empty value,
 * a Bearer that is not exactly one b64token after spaces (a tab, a second word, a second
 * header joined with a comma), a value that is no scheme at all, and another scheme with a
 * Bearer hidden behind it.
 */
export function parseAuthorization(value: string | null): ParsedAuthorization {
  if (value === null) return { kind: "none" };
  const refuse = (reason: string) => new GatewayError("auth_header_malformed", { vars: { reason } });
  if (value.trim() === "") throw refuse("it is empty");
  const bearer = BEARER.exec(value);
  if (bearer) return { kind: "bearer", token: bearer[1] };
  if (/^bearer(?:[^A-Za-z0-9]|$)/i.test(value))
    throw refuse("a Bearer credential is one token after one or more spaces, nothing else");
  if (!AUTH_SCHEME.test(value)) throw refuse("it names no scheme");
  if (/,\s*bearer\b/i.test(value)) throw refuse("it carries a second credential");
  return { kind: "other-scheme" };
}

/**
 * The Bearer a WebSocket offers as the subprotocol `personalclaw.bearer.<token>` (a browser's
 * WebSocket cannot set Authorization; a URL would put the token in logs). Only for the events
 * socket, only when no Authorization header came; more than one is refused.
 */
export function subprotocolBearer(value: string | null): ParsedAuthorization {
  if (value === null) return { kind: "none" };
  const offered = value
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part.startsWith(BEARER_SUBPROTOCOL_PREFIX));
  if (offered.length === 0) return { kind: "none" };
  if (offered.length > 1)
    throw new GatewayError("auth_header_malformed", { vars: { reason: "the socket offers more than one token" } });
  const token = offered[0]!.slice(BEARER_SUBPROTOCOL_PREFIX.length);
  if (!/^[A-Za-z0-9\-._~+]+$/.test(token))
    throw new GatewayError("auth_header_malformed", { vars: { reason: "the socket's token is not one token" } });
  return { kind: "bearer", token };
}

/** The copies of cookie `name` in a Cookie header, in the order the browser sent them. */
function cookieValues(header: string, name: string): string[] {
  const values: string[] = [];
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) values.push(part.slice(eq + 1).trim());
  }
  return values;
}

/** The session cookie of a request, or the number of copies when they conflict. */
export type SessionCookie = { kind: "none" } | { kind: "one"; value: string } | { kind: "conflict"; count: number };

/**
 * The one session-cookie rule. A `__Host-` copy, when the browser kept one, is the session
 * cookie and the fallback name is not read at all (so a copy planted under it neither signs
 * anyone in nor shadows the owner's). Otherwise the fallback name is read. Two copies of the
 * name read are a conflict: the browser holds one the gateway did not set.
 */
export function sessionCookieOf(header: string | null, port: string): SessionCookie {
  const hostCopies = cookieValues(header ?? "", hostCookieName(port));
  const copies = hostCopies.length > 0 ? hostCopies : cookieValues(header ?? "", cookieName(port));
  if (copies.length === 0) return { kind: "none" };
  if (copies.length > 1) return { kind: "conflict", count: copies.length };
  return { kind: "one", value: copies[0] };
}

const BROWSER_CODES: Record<RefusalReason, ErrorCode> = {
  signed_out: "session_signed_out",
  signed_out_elsewhere: "session_signed_out",
  signed_out_others: "session_signed_out",
  signed_out_everywhere: "session_signed_out",
  limit: "session_signed_out",
  replaced: "session_signed_out",
  superseded: "session_signed_out",
  key_replaced: "session_signed_out",
  ended: "session_signed_out",
  expired: "session_expired",
  link_expired: "session_expired",
  link_used: "session_required",
  not_signed_in: "session_required",
};

/** A browser refusal (cookie or link): code by reason, with the reason, when, and X-Auth-Required. */
export function browserRefusal(reason: RefusalReason, at: number | null): GatewayError {
  return new GatewayError(BROWSER_CODES[reason], {
    vars: { reason: reason.replace(/_/g, " ") },
    detail: { reason, at: at === null ? null : new Date(at).toISOString() },
    headers: { "X-Auth-Required": "true" },
  });
}
