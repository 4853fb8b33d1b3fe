// The security event log's routes (SEL-*). Reads and rotation are owner-only: an app token
// is refused whatever its manifest says. The host bridge appends through its own route.
import { z } from "zod";
import { SecurityEventInputSchema, SecurityOutcomeSchema, MAX_QUERY_LIMIT, SecurityLogAnchorSchema } from "../contracts/security-event";
import { announceAppended, securityLog } from "../audit";
import { bridgeCall } from "../bridge-client";
import { route } from "./define";

const EventsQuerySchema = z
  .object({
    kind: z.string().max(80).optional(),
    principal: z.string().max(160).optional(),
    outcome: SecurityOutcomeSchema.optional(),
    since: z.string().refine((text) => !Number.isNaN(Date.parse(text)), "since must be an ISO-8601 time").optional(),
    before_seq: z.coerce.number().int().min(1).optional(),
    limit: z.coerce.number().int().min(1).max(MAX_QUERY_LIMIT).optional(),
  })
  .strict();

const HeadQuerySchema = z
  .object({
    anchor_seq: z.coerce.number().int().min(0).optional(),
    anchor_mac: z.string().regex(/^[0-9a-f]{64}$/).optional(),
  })
  .strict();

export const securityRoutes = [
  route({
    method: "GET",
    path: "/api/security/events",
    family: "security-log",
    authz: { kind: "owner" },
    internal: true,
    query: EventsQuerySchema,
    contract: "Security events newest first, filtered by kind, principal, outcome and since; paged by before_seq.",
    async handle({ env, query }) {
      return securityLog(env).query(query);
    },
  }),
  route({
    method: "GET",
    path: "/api/security/events/verify",
    family: "security-log",
    authz: { kind: "owner" },
    internal: true,
    contract: "Verifies the whole chain and the anchor outside it: {ok, checked, segments, first_bad_seq?, reason?}.",
    async handle({ env }) {
      const anchor = await bridgeCall(env, "GET", "/sel/anchor", SecurityLogAnchorSchema.nullable());
      return securityLog(env).verify(anchor);
    },
  }),
  route({
    method: "POST",
    path: "/api/sel/rotate",
    family: "security-log",
    authz: { kind: "owner" },
    internal: true,
    body: z.object({}).strict(),
    contract: "Seals the live segment and starts a new chain linked to it; records a sel.rotated row.",
    async handle({ env }) {
      return securityLog(env).rotate("on_demand");
    },
  }),
  route({
    method: "POST",
    path: "/api/internal/sel/append",
    family: "internal",
    authz: { kind: "internal-only" },
    internal: true,
    body: SecurityEventInputSchema,
    contract: "The host bridge's door to the security log: appends one row.",
    async handle({ env, body }) {
      const appended = await securityLog(env).append(body);
      await announceAppended(env, appended);
      return appended;
    },
  }),
  route({
    method: "GET",
    path: "/api/internal/sel/head",
    family: "internal",
    authz: { kind: "internal-only" },
    internal: true,
    query: HeadQuerySchema,
    contract: "The newest row's seq and mac, for the anchor the host bridge keeps outside the log, and where the log stands against the anchor it names (extends, forked, truncated).",
    async handle({ env, query }) {
      const log = securityLog(env);
      const head = await log.head();
      const standing = query.anchor_seq === undefined || query.anchor_mac === undefined ? null : await log.anchorStanding({ seq: query.anchor_seq, mac: query.anchor_mac });
      return { ...head, standing };
    },
  }),
];
