// The security event log's routes (SEL-*). Reads and rotation are owner-only: an app token
// is refused whatever its manifest says. The host bridge appends through its own route.
import { securityLog } from "../../durable/instances";
import { z } from "zod";
import {
  AppendResultSchema,
  CheckpointExportSchema,
  CosignatureRecordSchema,
  RotateResultSchema,
  SecurityEventPageSchema,
  SecurityLogHeadAnswerSchema,
  VerifyResultSchema,
  WitnessAnswerSchema,
  SecurityEventInputSchema,
  SecurityEventQueryTextSchema,
  WitnessRequestSchema,
  WitnessAdmitRequestSchema,
  WitnessAdmittedSchema,
} from "../../kernel/contracts/security-event";
import { announceAppended } from "../../durable/security-log/audit";
import { bridgeCall } from "../bridge-client";
import { route } from "../route-row";
import { GatewayError } from "../../kernel/contracts/errors";
import { refusalGroup, refusalSubject } from "../refusal-group";

const HeadQuerySchema = z
  .object({
    anchor_seq: z.coerce.number().int().min(0).optional(),
    anchor_mac: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .optional(),
  })
  .strict();

const WitnessedAnswer = z.strictObject({
  witnessed: z.strictObject({ note: z.string(), seq: z.number().int().min(0), cosigned_at: z.string() }).nullable(),
});

const WitnessedQuerySchema = z.object({ origin: z.string().min(1).max(200) }).strict();

export const securityRoutes = [
  route({
    method: "GET",
    path: "/api/security/events",
    family: "security-log",
    authz: { kind: "owner" },
    internal: true,
    query: SecurityEventQueryTextSchema,
    contract:
      "Security events newest first, filtered by kind, principal, subject (for most rows the app the event is about), outcome and since; paged by before_seq.",
    answer: { schema: SecurityEventPageSchema },
    refuses: [],
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
    answer: { schema: VerifyResultSchema },
    refuses: ["bridge_unavailable"],
    async handle({ env }) {
      const anchor = await bridgeCall(env, "GET /sel/anchor", undefined);
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
    answer: { schema: RotateResultSchema },
    refuses: [],
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
    answer: { schema: AppendResultSchema },
    refuses: ["sel_event_invalid"],
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
    contract:
      "The newest row's seq and mac, for the anchor the host bridge keeps outside the log, and where the log stands against the anchor it names (extends, forked, truncated).",
    answer: { schema: SecurityLogHeadAnswerSchema },
    refuses: [],
    async handle({ env, query }) {
      const log = securityLog(env);
      const head = await log.head();
      const standing =
        query.anchor_seq === undefined || query.anchor_mac === undefined
          ? null
          : await log.anchorStanding({ seq: query.anchor_seq, mac: query.anchor_mac });
      return { ...head, standing };
    },
  }),
  route({
    method: "POST",
    path: "/api/security/checkpoint",
    family: "security-log",
    authz: { kind: "owner" },
    internal: true,
    contract:
      "Signs a checkpoint covering the head when rows came after the last one (a sel.checkpoint row), and answers the newest: {note, public_key, origin, seq, row_seq}; the note is C2SP signed-note text.",
    answer: { schema: CheckpointExportSchema },
    refuses: ["sel_checkpoints_off"],
    async handle({ env }) {
      return securityLog(env).checkpoint();
    },
  }),
  route({
    method: "GET",
    path: "/api/security/checkpoint",
    family: "security-log",
    authz: { kind: "owner" },
    internal: true,
    contract:
      "The newest checkpoint the log holds, signing none (POST signs one covering the head): {note, public_key, origin, seq, row_seq}. 404 sel_no_checkpoint before the first.",
    answer: { schema: CheckpointExportSchema },
    refuses: ["sel_checkpoints_off", "sel_no_checkpoint"],
    async handle({ env }) {
      // A read changes nothing: a link or a prefetch cannot make the log sign and store.
      const latest = await securityLog(env).latestCheckpoint();
      if (latest === null) throw new GatewayError("sel_no_checkpoint");
      return latest;
    },
  }),
  route({
    method: "POST",
    path: "/api/security/witness",
    family: "security-log",
    authz: {
      kind: "bootstrap",
      why: "another machine's log shows its checkpoints here without a session of this gateway; only a log whose key this witness's owner admitted is cosigned, and a cosignature says only that this gateway saw that checkpoint then",
    },
    internal: false,
    body: WitnessRequestSchema,
    contract:
      "As a witness: cosigns a checkpoint note signed by public_key, a key the owner admitted (POST /api/security/witness/admitted), if it extends the one held for its origin; answers {cosignature, witness_key, witness}. Each refusal is a counted security-log row.",
    answer: { schema: WitnessAnswerSchema },
    refuses: [
      "sel_checkpoints_off",
      "witness_log_not_admitted",
      "witness_checkpoint_invalid",
      "witness_key_changed",
      "witness_rollback",
    ],
    async handle({ env, body, audit }) {
      const outcome = await securityLog(env).witness(body.note, body.public_key);
      if (!outcome.ok) {
        // Counted per reason: anyone can ask, so a flood of refusals is one row per window.
        const path = "/api/security/witness";
        await audit({
          kind: outcome.code,
          outcome: "refused",
          subject: refusalSubject("POST", path),
          detail: { code: outcome.code },
          group: refusalGroup("POST", path, [], { method: "POST", path }, outcome.code),
        });
        throw new GatewayError(outcome.code, { message: outcome.message });
      }
      return { cosignature: outcome.cosignature, witness_key: outcome.witness_key, witness: outcome.witness };
    },
  }),
  route({
    method: "POST",
    path: "/api/security/witness/admitted",
    family: "security-log",
    authz: { kind: "owner" },
    internal: false,
    body: WitnessAdmitRequestSchema,
    contract:
      "As a witness: admits the log whose checkpoints public_key (a note verifier key, as GET /api/security/checkpoint answers it on that log's gateway) signs; only admitted logs are cosigned, at most 100. Answers {origin, public_key, admitted_logs}; a witness_log_admitted row.",
    answer: { schema: WitnessAdmittedSchema },
    refuses: ["sel_checkpoints_off", "witness_checkpoint_invalid", "witness_full"],
    async handle({ env, body, audit }) {
      const outcome = await securityLog(env).admitWitnessLog(body.public_key);
      if (!outcome.ok) throw new GatewayError(outcome.code, { message: outcome.message });
      const admitted = { origin: outcome.origin, public_key: outcome.public_key, admitted_logs: outcome.admitted_logs };
      await audit({ kind: "witness_log_admitted", outcome: "allowed", subject: outcome.origin, detail: admitted });
      return admitted;
    },
  }),
  route({
    method: "GET",
    path: "/api/security/witness",
    family: "security-log",
    authz: {
      kind: "bootstrap",
      why: "what a witness cosigned is public evidence: the note is signed and holds no row",
    },
    internal: false,
    query: WitnessedQuerySchema,
    contract: "As a witness: the newest checkpoint cosigned for ?origin=, {note, seq, cosigned_at}, or null.",
    answer: { schema: WitnessedAnswer },
    refuses: [],
    async handle({ env, query }) {
      return { witnessed: await securityLog(env).witnessed(query.origin) };
    },
  }),
  route({
    method: "GET",
    path: "/api/internal/sel/checkpoint",
    family: "internal",
    authz: { kind: "internal-only" },
    internal: true,
    contract:
      "The newest checkpoint the log holds, without signing one, or null: what the host bridge posts to the owner's witness.",
    answer: { schema: z.strictObject({ checkpoint: CheckpointExportSchema.nullable() }) },
    refuses: [],
    async handle({ env }) {
      return { checkpoint: await securityLog(env).latestCheckpoint() };
    },
  }),
  route({
    method: "POST",
    path: "/api/internal/sel/cosignature",
    family: "internal",
    authz: { kind: "internal-only" },
    internal: true,
    body: CosignatureRecordSchema,
    contract: "Records a witness's cosignature of one of the log's checkpoints (a sel.cosigned row).",
    answer: { schema: AppendResultSchema },
    refuses: [],
    async handle({ env, body }) {
      return securityLog(env).recordCosignature(body);
    },
  }),
];
