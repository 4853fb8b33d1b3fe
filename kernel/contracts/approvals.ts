// Approvals (APPR-*): what an asker sends to raise one, what an answer may say, and what the
// API answers about approvals and grants. Shared by the gateway, the CLI and the fixture docs.
import { z } from "zod";

/** How far a yes reaches: this approval only, or a grant for this asker and kind of action. */
export const APPROVAL_SCOPES = ["once", "1h", "30d", "always"] as const;
export const ApprovalScopeSchema = z.enum(APPROVAL_SCOPES);
export type ApprovalScope = z.infer<typeof ApprovalScopeSchema>;

/** How long a grant of each scope lives; `once` leaves no grant, `always` lives until revoked. */
export const SCOPE_LIFETIME_MS: Record<ApprovalScope, number | null> = {
  once: 0,
  "1h": 3_600_000,
  "30d": 30 * 86_400_000,
  always: null,
};

/** Scopes that leave a lasting yes behind: answering with one needs owner presence (AUTH-26). */
export const LASTING_SCOPES: ReadonlySet<ApprovalScope> = new Set(["30d", "always"]);

export const APPROVAL_STATES = ["pending", "approved", "denied", "expired"] as const;
export type ApprovalState = (typeof APPROVAL_STATES)[number];

/** At most this many pending approvals per asker; raising one more expires the oldest (reason `limit`). */
export const MAX_PENDING_PER_ASKER = 20;
export const DEFAULT_APPROVAL_TTL_MS = 24 * 3_600_000;
/** The longest a long-poll waits for an answer. */
export const MAX_WAIT_SECONDS = 30;

/** A kind of action: dotted snake_case words, e.g. `notes.publish`. Grants match on it. */
export const ApprovalKindSchema = z
  .string()
  .max(80)
  .regex(/^[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)*$/, "a kind is snake_case words joined by '.'");

/** Exactly what would happen if the owner says yes. */
export const ApprovalActionSchema = z
  .object({
    /** The route or operation the asker will call, e.g. `POST /notes/publish`. */
    route: z.string().min(1).max(300),
    /** What it acts on, e.g. the note's id or a host name. */
    target: z.string().max(500),
    /** sha256 of the exact arguments, so the yes is to these arguments. */
    arguments_digest: z.string().regex(/^sha256:[0-9a-f]{64}$/, "must be sha256:<64 hex digits>"),
    /** One sentence the Inbox shows beside the title. */
    summary: z.string().max(1000).optional(),
    /** True when a yes lets the app reach something it could not reach before; approving it then needs owner presence. */
    widens_reach: z.boolean().optional(),
    /** For a change of something already consented to (a tool's definition): the text before and after. */
    change: z.strictObject({ before: z.string().max(4000), after: z.string().max(4000) }).optional(),
  })
  .strict();
export type ApprovalAction = z.infer<typeof ApprovalActionSchema>;

/**
 * True when a yes to `action` lets the app reach something it could not reach before: only the
 * owner, present, answers such an ask, so no earlier grant ever answers it in the owner's place.
 */
export function widensReach(action: Pick<ApprovalAction, "widens_reach">): boolean {
  return action.widens_reach === true;
}

export const RaiseApprovalBodySchema = z
  .object({
    kind: ApprovalKindSchema,
    title: z.string().min(1).max(200),
    action: ApprovalActionSchema,
    /** The scopes the asker accepts an answer in; `once` when left out. */
    scopes: z.array(ApprovalScopeSchema).min(1).max(4).optional(),
    ttl_seconds: z.number().int().min(60).max(86_400).optional(),
  })
  .strict();
export type RaiseApprovalBody = z.infer<typeof RaiseApprovalBodySchema>;

export const ApproveBodySchema = z.object({ scope: ApprovalScopeSchema.optional() }).strict();
export const DenyBodySchema = z.object({}).strict();
export const WaitQuerySchema = z
  .object({ wait: z.coerce.number().int().min(0).max(MAX_WAIT_SECONDS).optional() })
  .strict();
export const ListQuerySchema = z.object({ state: z.enum(APPROVAL_STATES).optional() }).strict();

/** Who decided: `you` (an owner session) or `grant` (a live grant answered at once). */
export const ApprovalAnswerSchema = z.strictObject({
  by: z.enum(["you", "grant"]),
  decision: z.enum(["approved", "denied"]),
  session: z.string().nullable(),
  at: z.string(),
  scope: ApprovalScopeSchema.nullable(),
  grant_id: z.string().nullable(),
});
export type ApprovalAnswer = z.infer<typeof ApprovalAnswerSchema>;

/** One approval as every route answers it. */
export const ApprovalViewSchema = z.strictObject({
  id: z.string(),
  /** The principal that raised it: app:<name> or internal:<work>. */
  asked_by: z.string(),
  app: z.string().nullable(),
  kind: z.string(),
  title: z.string(),
  action: ApprovalActionSchema,
  scopes: z.array(ApprovalScopeSchema),
  state: z.enum(APPROVAL_STATES),
  /** Why it is expired (`ttl`, `limit`) or how it was approved (`grant`); null otherwise. */
  reason: z.string().nullable(),
  created_at: z.string(),
  expires_at: z.string(),
  answer: ApprovalAnswerSchema.nullable(),
});
export type ApprovalView = z.infer<typeof ApprovalViewSchema>;

/** A live grant a scoped yes left. */
export const GrantViewSchema = z.strictObject({
  id: z.string(),
  asked_by: z.string(),
  app: z.string().nullable(),
  kind: z.string(),
  scope: ApprovalScopeSchema,
  created_at: z.string(),
  /** null: until revoked. */
  expires_at: z.string().nullable(),
  approval_id: z.string(),
  session: z.string().nullable(),
});
export type GrantView = z.infer<typeof GrantViewSchema>;
