// Contracts of the security event log (SecurityLog Durable Object, SEL-*): what a caller
// appends, what a row is, how rows are queried and what verification answers. Shared by
// the gateway routes, the host bridge and the DO itself; imports nothing but zod.
import { z } from "zod";

export const SecurityOutcomeSchema = z.enum(["allowed", "refused", "timeout", "error", "info"]);

/** snake_case words, optionally dotted or colon-separated: `session_signed_in`, `sel.rotated`. */
export const SecurityEventKindSchema = z
  .string()
  .max(80)
  .regex(/^[a-z][a-z0-9_]*(?:[.:][a-z][a-z0-9_]*)*$/, "a kind is snake_case words joined by '.' or ':'");

/** Who the decision was about: owner, app:<name>, internal:<work>, cli, gateway or anonymous. */
export const SecurityPrincipalSchema = z
  .string()
  .max(160)
  .regex(
    /^(?:owner|cli|gateway|anonymous|app:[A-Za-z0-9][A-Za-z0-9._-]*|internal:[A-Za-z0-9][A-Za-z0-9._:/-]*)$/,
    "a principal is owner, cli, gateway, anonymous, app:<name> or internal:<work>",
  );

/** Kinds under `sel.` are written by the log itself (rotation, removal); no caller may forge one. */
export const RESERVED_KIND_PREFIX = "sel.";

/** One event a caller asks the log to record. `secrets` are masked wherever they appear and never stored. */
export const SecurityEventInputSchema = z.object({
  kind: SecurityEventKindSchema.refine((kind) => !kind.startsWith(RESERVED_KIND_PREFIX), {
    message: "kinds under 'sel.' are written by the log itself",
  }),
  principal: SecurityPrincipalSchema,
  outcome: SecurityOutcomeSchema,
  subject: z.string().max(100_000).optional(),
  detail: z.record(z.string(), z.unknown()).optional(),
  secrets: z.array(z.string()).max(64).optional(),
  /**
   * What identical refusals share beside kind and principal: a route pattern or family and
   * the reason, never a raw path or a value a caller chose (so unique paths are counted in
   * one row, not copied). Without it, refusals with the same subject are the identical ones.
   */
  group: z.string().max(200).optional(),
});
export type SecurityEventInput = z.input<typeof SecurityEventInputSchema>;

export const MacHexSchema = z.string().regex(/^[0-9a-f]{64}$/, "a mac is 64 lowercase hex characters");

/** A stored row as the log returns it. mac = HMAC-SHA256(key, canonical JSON of the other fields, prev_mac among them). */
export const SecurityEventRowSchema = z.object({
  seq: z.number().int().min(1),
  ts: z.string(),
  kind: z.string(),
  principal: z.string(),
  outcome: SecurityOutcomeSchema,
  subject: z.string(),
  detail: z.record(z.string(), z.unknown()),
  segment: z.number().int().min(1),
  prev_mac: z.string(),
  mac: z.string(),
});
export type SecurityEventRow = z.infer<typeof SecurityEventRowSchema>;

/** The row written; for a refusal counted in an open window (no row of its own), the newest row and `counted: true`. */
export const AppendResultSchema = z.object({
  seq: z.number().int().min(0),
  mac: MacHexSchema,
  counted: z.literal(true).optional(),
});
export type AppendResult = z.infer<typeof AppendResultSchema>;

/** The newest row's seq and mac (seq 0 and 64 zeros for an empty log) and the live segment. */
export const SecurityLogHeadSchema = z.object({
  seq: z.number().int().min(0),
  mac: MacHexSchema,
  segment: z.number().int().min(1),
});
export type SecurityLogHead = z.infer<typeof SecurityLogHeadSchema>;

/** A (seq, mac) pair written somewhere the log cannot reach, to detect truncation later. */
export const SecurityLogAnchorSchema = z.object({ seq: z.number().int().min(0), mac: MacHexSchema });
export type SecurityLogAnchor = z.infer<typeof SecurityLogAnchorSchema>;

/**
 * Where the log stands against an anchor: `extends` (the anchored row is still there with the
 * anchored mac, or retention removed it with a removal row that agrees), `forked` (the anchored
 * seq holds another row: rows were cut and rewritten), `truncated` (the log ends before it).
 */
export const AnchorStandingSchema = z.enum(["extends", "forked", "truncated"]);
export type AnchorStanding = z.infer<typeof AnchorStandingSchema>;

/** The head, with where it stands against the anchor the caller holds. */
export const SecurityLogHeadAnswerSchema = SecurityLogHeadSchema.extend({ standing: AnchorStandingSchema.nullable() });

export const MAX_QUERY_LIMIT = 500;

export const SecurityEventQuerySchema = z.object({
  kind: z.string().max(80).optional(),
  principal: z.string().max(160).optional(),
  /** Exactly this subject (for most rows, the app the event is about). */
  subject: z.string().max(300).optional(),
  outcome: SecurityOutcomeSchema.optional(),
  /** ISO-8601 time; rows at or after it. */
  since: z
    .string()
    .refine((text) => !Number.isNaN(Date.parse(text)), "since must be an ISO-8601 time")
    .optional(),
  /** Paging cursor: rows with a seq below it (the previous page's next_before_seq). */
  before_seq: z.number().int().min(1).optional(),
  limit: z.number().int().min(1).max(MAX_QUERY_LIMIT).default(50),
});
export type SecurityEventQuery = z.input<typeof SecurityEventQuerySchema>;

/** The same filter as URL query text (`GET /api/security/events?...`): numbers arrive as text, nothing else is accepted. */
export const SecurityEventQueryTextSchema = SecurityEventQuerySchema.extend({
  before_seq: z.coerce.number().int().min(1).optional(),
  limit: z.coerce.number().int().min(1).max(MAX_QUERY_LIMIT).optional(),
}).strict();

export const SecurityEventPageSchema = z.object({
  events: z.array(SecurityEventRowSchema),
  next_before_seq: z.number().int().nullable(),
});
export type SecurityEventPage = z.infer<typeof SecurityEventPageSchema>;

/** Why verification stopped; stable strings clients may key on. */
export const VerifyFailureReasonSchema = z.enum([
  "mac_mismatch",
  "seq_gap",
  "chain_broken",
  "truncated",
  "segment_link_broken",
  "forked",
  "epoch_broken",
]);
export type VerifyFailureReason = z.infer<typeof VerifyFailureReasonSchema>;

export const VerifyResultSchema = z.object({
  ok: z.boolean(),
  checked: z.number().int().min(0),
  segments: z.number().int().min(0),
  first_bad_seq: z.number().int().min(0).optional(),
  reason: VerifyFailureReasonSchema.optional(),
  /** Rows whose mac could not be recomputed because their epoch's key is erased (checked with the seed only). */
  macs_unchecked: z.number().int().min(1).optional(),
});
export type VerifyResult = z.infer<typeof VerifyResultSchema>;

export const SecurityLogSegmentSchema = z.object({
  id: z.number().int().min(1),
  started_at: z.string(),
  sealed_at: z.string().nullable(),
  first_seq: z.number().int().min(1),
  last_seq: z.number().int().min(0).nullable(),
  last_mac: z.string().nullable(),
  bytes: z.number().int().min(0),
});
export type SecurityLogSegment = z.infer<typeof SecurityLogSegmentSchema>;

export const RotateResultSchema = z.object({
  rotated: z.boolean(),
  sealed_segment: z.number().int().nullable(),
  segment: z.number().int().min(1),
  seq: z.number().int().min(0),
});
export type RotateResult = z.infer<typeof RotateResultSchema>;

export const RetentionResultSchema = z.object({
  removed: z.array(
    z.object({
      segment: z.number().int(),
      first_seq: z.number().int(),
      last_seq: z.number().int(),
      last_mac: z.string(),
      reason: z.enum(["age", "size"]),
    }),
  ),
  deferred: z.boolean(),
});
export type RetentionResult = z.infer<typeof RetentionResultSchema>;

/** A signed checkpoint as exported: the C2SP signed note and the verifier key that checks it. */
export const CheckpointExportSchema = z.object({
  note: z.string().max(8192),
  public_key: z.string().max(512),
  origin: z.string(),
  seq: z.number().int().min(0),
  row_seq: z.number().int().min(1),
});
export type CheckpointExportAnswer = z.infer<typeof CheckpointExportSchema>;

/** What a witness is asked: cosign this note, signed by this key. */
export const WitnessRequestSchema = z
  .object({ note: z.string().min(1).max(8192), public_key: z.string().min(1).max(512) })
  .strict();
export type WitnessRequest = z.infer<typeof WitnessRequestSchema>;

/** The witness's owner admits one log, by the verifier key its checkpoints are signed with. */
export const WitnessAdmitRequestSchema = z.object({ public_key: z.string().min(1).max(512) }).strict();
/** What admitting a log answers: its origin, its key, and how many logs are admitted now. */
export const WitnessAdmittedSchema = z.object({
  origin: z.string(),
  public_key: z.string(),
  admitted_logs: z.number().int().min(0),
});
export type WitnessAdmitted = z.infer<typeof WitnessAdmittedSchema>;

/** What a witness answers: its cosignature line over the checkpoint body and the key that checks it. */
export const WitnessAnswerSchema = z.object({
  cosignature: z.string().max(512),
  witness_key: z.string().max(512),
  witness: z.string().max(200),
});

/** A witness's cosignature the log records (a sel.cosigned row). */
export const CosignatureRecordSchema = z
  .object({
    checkpoint_seq: z.number().int().min(0),
    witness: z.string().min(1).max(200),
    body: z.string().min(1).max(4096),
    cosignature: z.string().min(1).max(512),
  })
  .strict();
export type CosignatureRecord = z.infer<typeof CosignatureRecordSchema>;

/** `<home>/sel_witness.json`: the witness the owner configured and the key it answered with. */
export const WitnessConfigSchema = z.object({
  url: z.string().url(),
  witness_key: z.string(),
  witness: z.string(),
  since: z.string(),
});
export type WitnessConfig = z.infer<typeof WitnessConfigSchema>;
