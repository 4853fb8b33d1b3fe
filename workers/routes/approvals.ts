// Approvals (APPR-*): an app that declared permissions.approvals, or an internal process
// naming its work, raises a question; only the owner's signed-in session answers it, at
// every door, by the one rule in guards/approval-answer.ts. A yes may leave a scoped grant
// (an hour, 30 days, always) for the same asker and kind of action, which answers the next
// matching question at once; grants are listed and revocable.
import { approvalStore } from "../../durable/instances";
import { emitEvent } from "../../durable/event-hub/emit";
import { z } from "zod";
import { GatewayError } from "../../kernel/contracts/errors";
import {
  ApproveBodySchema,
  DEFAULT_APPROVAL_TTL_MS,
  DenyBodySchema,
  LASTING_SCOPES,
  ListQuerySchema,
  ApprovalViewSchema,
  GrantViewSchema,
  RaiseApprovalBodySchema,
  WaitQuerySchema,
  widensReach,
  type ApprovalScope,
  type ApprovalView,
  type GrantView,
} from "../../kernel/contracts/approvals";
import { grantsOf } from "../app-registry";
import { answerRefusal, ANSWER_REFUSAL_TEXT } from "../guards/approval-answer";
import { assertOwnerPresence } from "../guards/owner-presence";
import { principalLabel, type Principal } from "../guards/principal";
import { route, type RouteRequest } from "../route-row";

const APPROVALS = {
  kind: "app-may",
  why: "an app that declared permissions.approvals raises and reads its own approvals",
  grant: "approvals",
} as const;
const ANSWER = {
  kind: "answer-rule",
  why: "only an owner session answers; every other principal gets 403 approval_owner_only and one approval.answer_refused row",
} as const;
const Empty = z.object({}).strict();
const OneApproval = z.strictObject({ approval: ApprovalViewSchema });
const AnsweredApproval = z.strictObject({ approval: ApprovalViewSchema, grant: GrantViewSchema.nullable() });
const ANSWER_REFUSALS = [
  "approval_owner_only",
  "approval_not_found",
  "approval_not_pending",
  "approval_scope_not_accepted",
  "fresh_sign_in_required",
] as const;

type AnyRequest = RouteRequest<unknown, unknown>;

/** The asker a principal raises as: the app, or the internal process by its work. */
async function askerOf(req: AnyRequest): Promise<{ askedBy: string; app: string | null }> {
  const p = req.principal;
  if (p.kind === "app") {
    const grants = await grantsOf(req.env, p.app);
    if (grants?.approvals !== true) {
      await req.audit({
        kind: "approvals_not_declared",
        outcome: "refused",
        subject: `${req.c.req.method} /api/approvals`,
        detail: { app: p.app },
      });
      throw new GatewayError("approvals_not_declared", { vars: { app: p.app } });
    }
    return { askedBy: principalLabel(p), app: p.app };
  }
  if (p.kind === "internal") return { askedBy: principalLabel(p), app: null };
  throw new GatewayError("bad_request", {
    vars: { reason: "the owner answers approvals; an app or an internal process raises them" },
  });
}

/** Whose approvals a principal may read: every one for the owner, its own for an asker. */
async function readerScope(req: AnyRequest): Promise<string | null> {
  if (req.principal.kind === "owner") return null;
  return (await askerOf(req)).askedBy;
}

function sessionOf(principal: Principal): string | null {
  return principal.kind === "owner" ? principal.sessionId : null;
}

/** A yes that widens an app's reach, or that leaves a lasting grant behind, needs owner presence (AUTH-26). */
function needsPresence(approval: ApprovalView, scope: ApprovalScope): boolean {
  return widensReach(approval.action) || LASTING_SCOPES.has(scope);
}

function answerRoute(decision: "approve" | "deny") {
  const handle = async (req: RouteRequest<{ scope?: ApprovalScope }, undefined>) => {
    const id = req.params.id.slice(0, 80);
    const store = approvalStore(req.env);
    const approval = (await store.get(id, req.now)) as ApprovalView | null;
    const refusal = answerRefusal(req.principal, approval?.asked_by ?? null);
    if (refusal !== null) {
      await req.audit({
        kind: "approval.answer_refused",
        outcome: "refused",
        subject: id,
        detail: {
          tried: principalLabel(req.principal),
          action: decision,
          asked_by: approval?.asked_by ?? null,
          kind: approval?.kind ?? null,
          reason: refusal,
        },
      });
      throw new GatewayError("approval_owner_only", {
        vars: { reason: ANSWER_REFUSAL_TEXT[refusal] },
        detail: { reason: refusal },
      });
    }
    if (!approval) throw new GatewayError("approval_not_found", { vars: { id } });
    if (approval.state !== "pending")
      throw new GatewayError("approval_not_pending", { vars: { id, state: approval.state } });
    const scope: ApprovalScope = decision === "approve" ? (req.body.scope ?? "once") : "once";
    if (decision === "approve" && !approval.scopes.includes(scope)) {
      throw new GatewayError("approval_scope_not_accepted", { vars: { accepted: approval.scopes.join(", "), scope } });
    }
    if (decision === "approve" && needsPresence(approval, scope)) assertOwnerPresence(req as AnyRequest);
    const result = await store.answer(id, decision, scope, sessionOf(req.principal), req.now);
    if (!result.ok) {
      if (result.reason === "not_found") throw new GatewayError("approval_not_found", { vars: { id } });
      throw new GatewayError("approval_not_pending", { vars: { id, state: result.state ?? "unknown" } });
    }
    await req.audit({
      kind: "approval.answered",
      outcome: "allowed",
      subject: id,
      detail: {
        decision: result.approval.state,
        by: "you",
        session: sessionOf(req.principal),
        scope: decision === "approve" ? scope : null,
        asked_by: approval.asked_by,
        kind: approval.kind,
        grant_id: result.grant?.id ?? null,
      },
    });
    await emitEvent(req.env, "approval.answered", {
      id,
      asked_by: approval.asked_by,
      kind: approval.kind,
      decision: result.approval.state,
    });
    return { approval: result.approval as ApprovalView, grant: result.grant as GrantView | null };
  };
  return handle;
}

export const approvalRoutes = [
  route({
    method: "POST",
    path: "/api/approvals",
    family: "approvals",
    authz: APPROVALS,
    internal: true,
    body: RaiseApprovalBodySchema,
    contract:
      "Raises an approval {kind, title, action {route, target, arguments_digest, summary?, widens_reach?}, scopes?, ttl_seconds?} as the calling app (permissions.approvals: true, else 403 approvals_not_declared) or internal process. A live grant for the same asker and kind in an accepted scope approves it at once; otherwise it waits (ttl default 24 h), and beyond 20 pending per asker the oldest expires with reason limit.",
    answer: { status: 201, schema: OneApproval },
    // bad_request: the owner answers approvals, it does not raise them.
    refuses: ["approvals_not_declared", "bad_request"],
    async handle(req) {
      const asker = await askerOf(req as AnyRequest);
      const store = approvalStore(req.env);
      const raised = await store.raise(
        {
          askedBy: asker.askedBy,
          app: asker.app,
          kind: req.body.kind,
          title: req.body.title,
          action: req.body.action,
          scopes: [...new Set<ApprovalScope>(req.body.scopes ?? ["once"])],
          ttlMs: req.body.ttl_seconds === undefined ? DEFAULT_APPROVAL_TTL_MS : req.body.ttl_seconds * 1000,
        },
        req.now,
      );
      // What this raise expired (past its ttl, or beyond the asker's limit) the store has written, rows included.
      const approval = raised.approval as ApprovalView;
      if (raised.grant) {
        await req.audit({
          kind: "approval.answered",
          outcome: "allowed",
          subject: approval.id,
          detail: {
            decision: "approved",
            by: "grant",
            grant_id: raised.grant.id,
            scope: raised.grant.scope,
            asked_by: approval.asked_by,
            kind: approval.kind,
          },
        });
        await emitEvent(req.env, "approval.answered", {
          id: approval.id,
          asked_by: approval.asked_by,
          kind: approval.kind,
          decision: "approved",
        });
      } else {
        await req.audit({
          kind: "approval.raised",
          outcome: "info",
          subject: approval.id,
          detail: { asked_by: approval.asked_by, kind: approval.kind, scopes: approval.scopes },
        });
        await emitEvent(req.env, "approval.raised", {
          id: approval.id,
          asked_by: approval.asked_by,
          kind: approval.kind,
        });
      }
      return req.c.json({ approval }, 201);
    },
  }),
  route({
    method: "GET",
    path: "/api/approvals",
    family: "approvals",
    authz: APPROVALS,
    internal: true,
    query: ListQuerySchema,
    contract:
      "Approvals newest first (every pending one and the newest 500 others), optionally of one state: every one for the owner, its own for an app or internal process. Reading changes nothing: one past its ttl reads as expired (reason ttl), and the store writes it so, with its approval.expired row, when its ttl passes or at the next raise.",
    answer: {
      schema: z.strictObject({ approvals: z.array(ApprovalViewSchema), pending: z.number().int().min(0) }),
    },
    refuses: ["approvals_not_declared"],
    async handle(req) {
      const askedBy = await readerScope(req as AnyRequest);
      const approvals = (await approvalStore(req.env).list(req.now, {
        state: req.query.state,
        askedBy: askedBy ?? undefined,
      })) as ApprovalView[];
      return { approvals, pending: approvals.filter((a) => a.state === "pending").length };
    },
  }),
  route({
    method: "GET",
    path: "/api/approvals/grants",
    family: "approvals",
    authz: { kind: "owner" },
    internal: false,
    contract:
      "The live grants scoped answers left: asker, kind, scope, when it was given and when it ends (null: until revoked).",
    answer: { schema: z.strictObject({ grants: z.array(GrantViewSchema) }) },
    refuses: [],
    async handle({ env, now }) {
      return { grants: (await approvalStore(env).grants(now)) as GrantView[] };
    },
  }),
  route({
    method: "DELETE",
    path: "/api/approvals/grants/:id",
    family: "approvals",
    authz: { kind: "owner" },
    internal: false,
    body: Empty,
    contract:
      "Revokes a live grant; the next matching approval waits for the owner again. 404 approval_grant_not_found when there is none.",
    answer: { schema: z.strictObject({ revoked: GrantViewSchema }) },
    refuses: ["approval_grant_not_found"],
    async handle(req) {
      const id = req.params.id.slice(0, 80);
      const revoked = (await approvalStore(req.env).revokeGrant(id, req.now)) as GrantView | null;
      if (!revoked) throw new GatewayError("approval_grant_not_found", { vars: { id } });
      await req.audit({
        kind: "approval.grant_revoked",
        outcome: "allowed",
        subject: id,
        detail: { asked_by: revoked.asked_by, kind: revoked.kind, scope: revoked.scope },
      });
      return { revoked };
    },
  }),
  route({
    method: "GET",
    path: "/api/approvals/:id",
    family: "approvals",
    authz: APPROVALS,
    internal: true,
    query: WaitQuerySchema,
    contract:
      "One approval; ?wait=N (at most 30) holds the answer until it is no longer pending or N seconds pass. The owner reads any; an asker only its own (404 approval_not_found otherwise).",
    answer: { schema: OneApproval },
    refuses: ["approvals_not_declared", "approval_not_found"],
    async handle(req) {
      const askedBy = await readerScope(req as AnyRequest);
      const id = req.params.id.slice(0, 80);
      const store = approvalStore(req.env);
      const seen = (await store.get(id, req.now)) as ApprovalView | null;
      const anothers = seen !== null && askedBy !== null && seen.asked_by !== askedBy;
      if (anothers) {
        // Answered as if there were none, and kept: an asker reaching for another's approval.
        await req.audit({
          kind: "approval_read_refused",
          outcome: "refused",
          subject: id,
          detail: { reason: "another_askers_approval" },
          group: `GET /api/approvals/:id ${askedBy}`,
        });
      }
      if (!seen || anothers) throw new GatewayError("approval_not_found", { vars: { id } });
      const wait = req.query.wait ?? 0;
      const approval = wait > 0 ? ((await store.waitFor(id, wait * 1000, req.now)) as ApprovalView) : seen;
      return { approval };
    },
  }),
  route({
    method: "POST",
    path: "/api/approvals/:id/approve",
    family: "approvals",
    authz: ANSWER,
    internal: true,
    body: ApproveBodySchema,
    contract:
      "The owner approves in a scope the asker accepts (once, 1h, 30d, always; default once); a scope other than once stores a grant for this asker and kind. Approving an action that widens an app's reach, or with 30d or always, needs owner presence (401 fresh_sign_in_required).",
    answer: { schema: AnsweredApproval },
    refuses: [...ANSWER_REFUSALS],
    handle: answerRoute("approve"),
  }),
  route({
    method: "POST",
    path: "/api/approvals/:id/deny",
    family: "approvals",
    authz: ANSWER,
    internal: true,
    body: DenyBodySchema,
    contract: "The owner denies a pending approval; the asker learns it from its long-poll.",
    answer: { schema: AnsweredApproval },
    refuses: ["approval_owner_only", "approval_not_found", "approval_not_pending"],
    handle: answerRoute("deny"),
  }),
];
