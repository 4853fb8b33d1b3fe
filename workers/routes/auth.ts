// Sign-in routes (AUTH-*): minting tokens with owner presence, the startup link, devices
// and sign-out, and replacing the signing key.
import { emitEvent } from "../../durable/event-hub/emit";
import { z } from "zod";
import { GatewayError } from "../../kernel/contracts/errors";
import {
  describeDuration,
  describeSignInLink,
  DeviceNameBodySchema,
  DEVICE_NAME_MAX_CHARS,
  parseDeviceName,
  DEFAULT_TOKEN_TTL_MS,
  parseTtl,
  TokenQuerySchema,
  type SessionView,
} from "../../kernel/contracts/session";
import { assertOwnerPresence } from "../guards/owner-presence";
import { signInBaseUrl } from "../guards/public-origin";
import { sessionCookieHeaders } from "../guards/credentials";
import type { Principal } from "../guards/principal";
import { sessions } from "../sessions";
import { describeUserAgent } from "../../kernel/text/user-agent";
import { MintedTokenAnswerSchema } from "../../kernel/contracts/session";
import { safeLine } from "../../kernel/text/text-safety";
import { route, type RouteRequest } from "../route-row";

/** One row of the Devices list. */
const DeviceRowSchema = z.strictObject({
  id: z.string(),
  kind: z.enum(["browser", "token"]),
  issuer: z.string(),
  name: z.string().nullable(),
  browser: z.string().nullable(),
  os: z.string().nullable(),
  user_agent: z.string().nullable(),
  first_address: z.string().nullable(),
  created_at: z.string(),
  last_used_at: z.string(),
  expires_at: z.string(),
  current: z.boolean(),
});
const SessionsAnswer = z.strictObject({ sessions: z.array(DeviceRowSchema) });
const SignedOutAnswer = z.strictObject({ signed_out: z.number().int().min(0) });

function currentSessionId(principal: Principal): string | null {
  return principal.kind === "owner" ? principal.sessionId : null;
}

async function auditSignOuts(req: RouteRequest<unknown, unknown>, ended: SessionView[], reason: string) {
  for (const session of ended) {
    await req.audit({
      kind: "session_signed_out",
      outcome: "allowed",
      subject: session.id,
      detail: { reason, kind: session.kind, issuer: session.issuer },
    });
    await emitEvent(req.env, "session.signed_out", { session: session.id, reason });
  }
}

function linkUrl(env: { GATEWAY_PORT: string; PERSONALCLAW_PUBLIC_ORIGIN?: string }, token: string): string {
  return `${signInBaseUrl(env)}?token=${token}`;
}

async function mintOwnerToken(req: RouteRequest<unknown, unknown>, issuer: string, ttlText: string | undefined) {
  let ttlMs = DEFAULT_TOKEN_TTL_MS;
  if (ttlText !== undefined) {
    const parsed = parseTtl(ttlText);
    if (!parsed.ok) throw new GatewayError(parsed.code, { vars: { ttl: ttlText.slice(0, 40) } });
    ttlMs = parsed.ms;
  }
  const minted = await sessions(req.env).mintToken(issuer, ttlMs, req.now);
  await req.audit({
    kind: "session_signed_in",
    outcome: "allowed",
    subject: minted.session.id,
    detail: { kind: "token", issuer },
  });
  await emitEvent(req.env, "session.signed_in", { session: minted.session.id });
  await auditSignOuts(req, minted.evicted, "limit");
  await auditSignOuts(req, minted.superseded, "superseded");
  const expiresAt = new Date(minted.session.expiresAt).toISOString();
  return {
    token: minted.token,
    url: linkUrl(req.env, minted.token),
    expires_in: Math.floor(ttlMs / 1000),
    expires_at: expiresAt,
    open_within: Math.floor(minted.openWithin / 1000),
    lasts: describeDuration(ttlMs),
    explains: describeSignInLink(ttlMs, expiresAt, minted.openWithin),
  };
}

/** One row of the Devices list; the User-Agent and name are third-party text, made one safe line. */
function deviceRow(s: SessionView, current: string | null) {
  const device = describeUserAgent(s.userAgent);
  return {
    id: s.id,
    kind: s.kind,
    issuer: s.issuer,
    name: s.name,
    browser: device.browser,
    os: device.os,
    user_agent: s.userAgent === null ? null : safeLine(s.userAgent),
    first_address: s.firstAddress,
    created_at: new Date(s.createdAt).toISOString(),
    last_used_at: new Date(s.lastUsedAt).toISOString(),
    expires_at: new Date(s.expiresAt).toISOString(),
    current: s.id === current,
  };
}

export const authRoutes = [
  route({
    method: "GET",
    path: "/api/token/local",
    family: "auth",
    authz: { kind: "owner" },
    internal: true,
    query: TokenQuerySchema,
    contract:
      "Mints an owner token (default 20h, at most 90d) for a caller proving owner presence; answers {token, url, expires_in, expires_at, open_within, lasts, explains}.",
    answer: { schema: MintedTokenAnswerSchema },
    refuses: ["fresh_sign_in_required", "token_ttl_invalid", "token_ttl_too_long"],
    async handle(req) {
      assertOwnerPresence(req);
      const issuer = req.principal.kind === "internal" ? "cli" : "token-route";
      return mintOwnerToken(req, issuer, req.query.ttl);
    },
  }),
  route({
    method: "POST",
    path: "/api/auth/startup-link",
    family: "auth",
    authz: { kind: "internal-only" },
    internal: true,
    body: z.object({}).strict(),
    contract: "Mints this start's sign-in link; the previous start's unopened link ends with reason superseded.",
    answer: { schema: MintedTokenAnswerSchema },
    refuses: [],
    async handle(req) {
      return mintOwnerToken(req, "startup", undefined);
    },
  }),
  route({
    method: "GET",
    path: "/api/auth/sessions",
    family: "auth",
    authz: { kind: "owner" },
    internal: false,
    contract:
      "Every sign-in (id, kind, issuer, the owner's name for it, browser and system from its User-Agent, first address, created, last used, expires, current); never a secret.",
    answer: { schema: SessionsAnswer },
    refuses: [],
    async handle({ env, now, principal }) {
      const current = currentSessionId(principal);
      const all = await sessions(env).list(now);
      return { sessions: all.filter((s) => s.kind !== "app").map((s) => deviceRow(s, current)) };
    },
  }),
  route({
    method: "POST",
    path: "/api/auth/sessions/:id/name",
    family: "auth",
    authz: { kind: "owner" },
    internal: false,
    body: DeviceNameBodySchema,
    contract: `Names one sign-in for the Devices list (1 to ${DEVICE_NAME_MAX_CHARS} visible characters; null clears it).`,
    answer: { schema: z.strictObject({ session: DeviceRowSchema }) },
    refuses: ["device_name_invalid", "session_not_found"],
    async handle(req) {
      const name = req.body.name === null ? null : parseDeviceName(req.body.name);
      if (name === "invalid") throw new GatewayError("device_name_invalid", { vars: { limit: DEVICE_NAME_MAX_CHARS } });
      const named = await sessions(req.env).rename(req.params.id, name, req.now);
      if (named === null)
        throw new GatewayError("session_not_found", { vars: { id: safeLine(req.params.id.slice(0, 40)) } });
      await emitEvent(req.env, "session.renamed", { session: named.id });
      return { session: deviceRow(named, currentSessionId(req.principal)) };
    },
  }),
  route({
    method: "POST",
    path: "/api/auth/logout",
    family: "auth",
    authz: { kind: "owner" },
    internal: false,
    body: z.object({}).strict(),
    contract: "Signs out the session making the request and clears its cookie.",
    answer: { schema: SignedOutAnswer },
    refuses: [],
    async handle(req) {
      const ended = await sessions(req.env).signOut("this", currentSessionId(req.principal), null, req.now);
      await auditSignOuts(req, ended, "signed_out");
      const answer = req.c.json({ signed_out: ended.length }, 200);
      for (const cookie of sessionCookieHeaders(req.env.GATEWAY_PORT, null, 0))
        answer.headers.append("Set-Cookie", cookie);
      return answer;
    },
  }),
  route({
    method: "POST",
    path: "/api/auth/sessions/:id/signout",
    family: "auth",
    authz: { kind: "owner" },
    internal: false,
    body: z.object({}).strict(),
    contract: "Signs out one other session by id.",
    answer: { schema: SignedOutAnswer },
    refuses: [],
    async handle(req) {
      const ended = await sessions(req.env).signOut("one", currentSessionId(req.principal), req.params.id, req.now);
      await auditSignOuts(req, ended, "signed_out_elsewhere");
      return { signed_out: ended.length };
    },
  }),
  route({
    method: "POST",
    path: "/api/auth/signout-others",
    family: "auth",
    authz: { kind: "owner" },
    internal: false,
    body: z.object({}).strict(),
    contract: "Signs out every session but the one making the request.",
    answer: { schema: SignedOutAnswer },
    refuses: [],
    async handle(req) {
      const ended = await sessions(req.env).signOut("others", currentSessionId(req.principal), null, req.now);
      await auditSignOuts(req, ended, "signed_out_others");
      return { signed_out: ended.length };
    },
  }),
  route({
    method: "POST",
    path: "/api/auth/signout-everywhere",
    family: "auth",
    authz: { kind: "owner" },
    internal: false,
    body: z.object({}).strict(),
    contract: "Signs out every session, this one included.",
    answer: { schema: SignedOutAnswer },
    refuses: [],
    async handle(req) {
      const ended = await sessions(req.env).signOut("everywhere", null, null, req.now);
      await auditSignOuts(req, ended, "signed_out_everywhere");
      return { signed_out: ended.length };
    },
  }),
  route({
    method: "POST",
    path: "/api/auth/rotate-key",
    family: "auth",
    authz: { kind: "owner" },
    internal: true,
    body: z.object({}).strict(),
    contract:
      "Replaces the session-signing key; every session and token ends with reason key_replaced. Needs no presence (containment).",
    answer: { schema: z.strictObject({ rotated: z.literal(true), sessions_ended: z.number().int().min(0) }) },
    refuses: [],
    async handle(req) {
      const ended = await sessions(req.env).rotateKey(req.now);
      await req.audit({ kind: "session_key_replaced", outcome: "allowed", detail: { sessions_ended: ended } });
      // Every session ended at once: "*" closes every owner socket.
      await emitEvent(req.env, "session.signed_out", { session: "*", reason: "key_replaced" });
      return { rotated: true, sessions_ended: ended };
    },
  }),
];
