// ApprovalStore: approvals (pending, answered, expired, who asked) and the scoped grants a
// yes leaves behind. It decides nothing about who may answer: the worker applies the one
// answer rule (workers/guards/approval-answer.ts) before it calls answer(). Time is always
// the caller's `now`, so expiry follows the request's clock.
//
// A read never changes anything: an approval past its ttl reads as expired (reason ttl) from
// the moment it passes it, and is written expired, with its approval.expired row, by the
// store's alarm at that moment or by the next raise, whichever comes first. GET
// /api/approvals used to expire and write rows itself, so reading the list changed state.
import { DurableObject } from "cloudflare:workers";
import { exportStore } from "../store-export";
import type { StoreExport } from "../../kernel/contracts/durability";
import type { Env } from "../env";
import { hexOf } from "../../kernel/crypto/hex";
import {
  MAX_PENDING_PER_ASKER,
  SCOPE_LIFETIME_MS,
  type ApprovalAction,
  type ApprovalScope,
  type ApprovalState,
  type ApprovalView,
  type GrantView,
  widensReach,
} from "../../kernel/contracts/approvals";
import { applySchemaSteps, storageSchemaStore } from "../schema-steps";
import { APPROVAL_SCHEMA_STEPS } from "./schema";
import { audit } from "../security-log/audit";

export interface RaiseInput {
  askedBy: string;
  app: string | null;
  kind: string;
  title: string;
  action: ApprovalAction;
  scopes: ApprovalScope[];
  ttlMs: number;
}

export interface RaiseResult {
  approval: ApprovalView;
  /** Set when a live grant answered it at once. */
  grant: GrantView | null;
  /** Approvals this raise expired: past their ttl, or the asker's oldest beyond the limit. */
  expired: ApprovalView[];
}

export type AnswerResult =
  | { ok: true; approval: ApprovalView; grant: GrantView | null }
  | { ok: false; reason: "not_found" | "not_pending"; state: ApprovalState | null };

type Row = Record<string, SqlStorageValue>;

/** How many answered or expired approvals a list shows (every pending one is shown besides). */
const LIST_SETTLED_LIMIT = 500;

/**
 * Answered and expired approvals are deleted 30 days after they were answered or ended, and
 * never more than MAX_SETTLED_APPROVALS of them stay (the oldest go first): kept for good, 4 120
 * raises had made the store 5.4 MiB. A pending approval, and one a live grant came from, stays.
 */
export const SETTLED_RETENTION_MS = 30 * 24 * 3600_000;
export const MAX_SETTLED_APPROVALS = 2000;

function newId(prefix: string): string {
  const raw = crypto.getRandomValues(new Uint8Array(12));
  return `${prefix}_${hexOf(raw)}`;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** A pending approval past its ttl, which reads as expired before it is written so. */
function isPastTtl(row: Row, now: number): boolean {
  return row.state === "pending" && Number(row.expires_at) <= now;
}

/** The approval as it is at `now`: one past its ttl is expired (reason ttl) whether or not that is written yet. */
function approvalView(row: Row, now: number): ApprovalView {
  const answered = row.answered_by === null ? null : String(row.answered_by);
  const pastTtl = isPastTtl(row, now);
  return {
    id: String(row.id),
    asked_by: String(row.asked_by),
    app: row.app === null ? null : String(row.app),
    kind: String(row.kind),
    title: String(row.title),
    action: JSON.parse(String(row.action)) as ApprovalAction,
    scopes: JSON.parse(String(row.scopes)) as ApprovalScope[],
    state: pastTtl ? "expired" : (row.state as ApprovalState),
    reason: pastTtl ? "ttl" : row.reason === null ? null : String(row.reason),
    created_at: iso(Number(row.created_at)),
    expires_at: iso(Number(row.expires_at)),
    answer:
      answered === null
        ? null
        : {
            by: answered === "grant" ? "grant" : "you",
            decision: row.state === "denied" ? "denied" : "approved",
            session: row.answer_session === null ? null : String(row.answer_session),
            at: iso(Number(row.answered_at)),
            scope: row.answer_scope === null ? null : (String(row.answer_scope) as ApprovalScope),
            grant_id: row.grant_id === null ? null : String(row.grant_id),
          },
  };
}

function grantView(row: Row): GrantView {
  return {
    id: String(row.id),
    asked_by: String(row.asked_by),
    app: row.app === null ? null : String(row.app),
    kind: String(row.kind),
    scope: String(row.scope) as ApprovalScope,
    created_at: iso(Number(row.created_at)),
    expires_at: row.expires_at === null ? null : iso(Number(row.expires_at)),
    approval_id: String(row.approval_id),
    session: row.session === null ? null : String(row.session),
  };
}

export class ApprovalStore extends DurableObject<Env> {
  /** Long-polls waiting for an approval to leave `pending`; memory only (a restart ends the wait, not the approval). */
  private waiters = new Map<string, Set<() => void>>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.blockConcurrencyWhile(async () => {
      applySchemaSteps(storageSchemaStore(ctx.storage), APPROVAL_SCHEMA_STEPS);
      await this.scheduleExpiry();
    });
  }

  /** The whole store at one instant, for a backup (durable/store-export.ts). */
  async exportState(): Promise<StoreExport> {
    return exportStore(this.ctx.storage.sql);
  }

  private sql(query: string, ...bindings: SqlStorageValue[]): Row[] {
    return this.ctx.storage.sql.exec(query, ...bindings).toArray();
  }

  private row(id: string): Row | null {
    return this.sql("SELECT * FROM approvals WHERE id = ?", id)[0] ?? null;
  }

  private wake(id: string): void {
    const waiting = this.waiters.get(id);
    if (!waiting) return;
    this.waiters.delete(id);
    for (const resolve of waiting) resolve();
  }

  private expire(id: string, reason: "ttl" | "limit", now: number): ApprovalView {
    this.sql("UPDATE approvals SET state = 'expired', reason = ? WHERE id = ? AND state = 'pending'", reason, id);
    this.wake(id);
    return approvalView(this.row(id)!, now);
  }

  /** Writes every pending approval past its ttl as expired; answers the ones it expired. */
  private sweep(now: number): ApprovalView[] {
    return this.sql("SELECT id FROM approvals WHERE state = 'pending' AND expires_at <= ?", now).map((r) =>
      this.expire(String(r.id), "ttl", now),
    );
  }

  /**
   * The one place an expiry becomes a security-log row, whatever expired it (the alarm, a raise).
   * One pushed out by the per-asker limit is the asker's excess refused: an asker raising at
   * will causes one per raise, so those are counted in the log's windows per asker, like any
   * refusal an app can cause at volume, instead of one row each.
   */
  private async recordExpired(expired: readonly ApprovalView[]): Promise<void> {
    for (const a of expired) {
      await audit(this.env, {
        kind: "approval.expired",
        outcome: a.reason === "limit" ? "refused" : "info",
        subject: a.id,
        detail: { reason: a.reason, asked_by: a.asked_by, kind: a.kind },
        ...(a.reason === "limit" ? { group: a.asked_by } : {}),
      });
    }
  }

  /** Sets the alarm for the moment the next pending approval passes its ttl (none when none waits). */
  private async scheduleExpiry(): Promise<void> {
    const next = this.sql("SELECT MIN(expires_at) AS next FROM approvals WHERE state = 'pending'")[0]?.next;
    if (next === null || next === undefined) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(Number(next));
  }

  /** Writes what passed its ttl by now as expired, with its rows, and waits for the next (the alarm's work). */
  async expireDue(now: number): Promise<ApprovalView[]> {
    const expired = this.sweep(now);
    await this.recordExpired(expired);
    await this.scheduleExpiry();
    return expired;
  }

  async alarm(): Promise<void> {
    await this.expireDue(Date.now());
  }

  private liveGrant(askedBy: string, kind: string, scopes: readonly ApprovalScope[], now: number): Row | null {
    const rows = this.sql(
      "SELECT * FROM grants WHERE asked_by = ? AND kind = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?) ORDER BY created_at DESC",
      askedBy,
      kind,
      now,
    );
    // A grant answers only an asker that accepts its scope: an asker that accepts only `once` is asked every time.
    return rows.find((r) => scopes.includes(String(r.scope) as ApprovalScope)) ?? null;
  }

  /**
   * Records a new approval. A live grant for the same asker and kind (in a scope the asker
   * accepts) approves it at once, unless it widens reach; otherwise it is pending, and the asker's oldest pending
   * approvals beyond MAX_PENDING_PER_ASKER expire with reason `limit`.
   */
  async raise(input: RaiseInput, now: number): Promise<RaiseResult> {
    const expired = this.sweep(now);
    const id = newId("apr");
    // An ask that widens reach waits for the owner, whatever was granted before.
    const grant = widensReach(input.action) ? null : this.liveGrant(input.askedBy, input.kind, input.scopes, now);
    this.sql(
      `INSERT INTO approvals (id, asked_by, app, kind, title, action, scopes, state, reason, created_at, expires_at, answered_by, answered_at, answer_session, answer_scope, grant_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      id,
      input.askedBy,
      input.app,
      input.kind,
      input.title,
      JSON.stringify(input.action),
      JSON.stringify(input.scopes),
      grant ? "approved" : "pending",
      grant ? "grant" : null,
      now,
      now + input.ttlMs,
      grant ? "grant" : null,
      grant ? now : null,
      grant ? grant.session : null,
      grant ? grant.scope : null,
      grant ? grant.id : null,
    );
    if (!grant) {
      const pending = this.sql(
        "SELECT id FROM approvals WHERE state = 'pending' AND asked_by = ? ORDER BY created_at ASC, rowid ASC",
        input.askedBy,
      );
      for (const old of pending.slice(0, Math.max(0, pending.length - MAX_PENDING_PER_ASKER)))
        expired.push(this.expire(String(old.id), "limit", now));
    }
    this.prune(now);
    await this.recordExpired(expired);
    await this.scheduleExpiry();
    return { approval: approvalView(this.row(id)!, now), grant: grant ? grantView(grant) : null, expired };
  }

  /** Deletes settled approvals past SETTLED_RETENTION_MS or beyond MAX_SETTLED_APPROVALS (see there). */
  private prune(now: number): void {
    const kept = "state != 'pending' AND id NOT IN (SELECT approval_id FROM grants WHERE revoked_at IS NULL)";
    // Answered: from its answer; expired: from its expiry time (one pushed out by the per-asker
    // limit keeps its later ttl; the count bound still holds it).
    this.sql(
      `DELETE FROM approvals WHERE ${kept} AND COALESCE(answered_at, expires_at) <= ?`,
      now - SETTLED_RETENTION_MS,
    );
    this.sql(
      `DELETE FROM approvals WHERE ${kept} AND rowid NOT IN (SELECT rowid FROM approvals WHERE state != 'pending' ORDER BY created_at DESC, rowid DESC LIMIT ?)`,
      MAX_SETTLED_APPROVALS,
    );
  }

  /** One approval as it is at `now` (past its ttl it reads as expired; nothing is written); null when there is none. */
  async get(id: string, now: number): Promise<ApprovalView | null> {
    const row = this.row(id);
    return row ? approvalView(row, now) : null;
  }

  /** Waits up to `waitMs` for the approval to leave `pending`, then answers it as it is. */
  async waitFor(id: string, waitMs: number, now: number): Promise<ApprovalView | null> {
    const first = await this.get(id, now);
    if (!first || first.state !== "pending" || waitMs <= 0) return first;
    let timer = 0 as unknown as ReturnType<typeof setTimeout>;
    await new Promise<void>((resolve) => {
      const waiting = this.waiters.get(id) ?? new Set();
      waiting.add(resolve);
      this.waiters.set(id, waiting);
      timer = setTimeout(() => {
        waiting.delete(resolve);
        resolve();
      }, waitMs);
    });
    clearTimeout(timer);
    return this.get(id, now + waitMs);
  }

  /**
   * Approvals newest first, optionally of one state and one asker: every pending one whatever
   * its age (an asker holds at most MAX_PENDING_PER_ASKER), and the newest LIST_SETTLED_LIMIT of
   * the rest. Filtered before the limit: it read the newest 500 rows of anyone and filtered
   * after, so 500 newer approvals of another asker hid one still waiting for the owner.
   */
  async list(now: number, filter: { state?: ApprovalState; askedBy?: string } = {}): Promise<ApprovalView[]> {
    // Read as at `now`: one past its ttl is listed with the settled ones, as expired.
    const waiting = "(state = 'pending' AND expires_at > ?)";
    const settledAt = "(state != 'pending' OR expires_at <= ?)";
    const asker = filter.askedBy === undefined ? "" : " AND asked_by = ?";
    const askerBinding = filter.askedBy === undefined ? [] : [filter.askedBy];
    const newestFirst = "ORDER BY created_at DESC, rowid DESC";
    const pending =
      filter.state === undefined || filter.state === "pending"
        ? this.sql(
            `SELECT *, rowid AS row_order FROM approvals WHERE ${waiting}${asker} ${newestFirst}`,
            now,
            ...askerBinding,
          )
        : [];
    const settled =
      filter.state === "pending"
        ? []
        : filter.state === undefined
          ? this.sql(
              `SELECT *, rowid AS row_order FROM approvals WHERE ${settledAt}${asker} ${newestFirst} LIMIT ?`,
              now,
              ...askerBinding,
              LIST_SETTLED_LIMIT,
            )
          : filter.state === "expired"
            ? this.sql(
                `SELECT *, rowid AS row_order FROM approvals WHERE (state = 'expired' OR (state = 'pending' AND expires_at <= ?))${asker} ${newestFirst} LIMIT ?`,
                now,
                ...askerBinding,
                LIST_SETTLED_LIMIT,
              )
            : this.sql(
                `SELECT *, rowid AS row_order FROM approvals WHERE state = ?${asker} ${newestFirst} LIMIT ?`,
                filter.state,
                ...askerBinding,
                LIST_SETTLED_LIMIT,
              );
    const order = (r: Row) => [Number(r.created_at), Number(r.row_order)] as const;
    return [...pending, ...settled]
      .sort((a, b) => order(b)[0] - order(a)[0] || order(b)[1] - order(a)[1])
      .map((row) => approvalView(row, now));
  }

  /**
   * Records the owner's answer to a pending approval. An approval in a scope other than
   * `once` also stores a grant for this asker and kind, expiring with its scope.
   */
  async answer(
    id: string,
    decision: "approve" | "deny",
    scope: ApprovalScope,
    session: string | null,
    now: number,
  ): Promise<AnswerResult> {
    const current = await this.get(id, now);
    if (!current) return { ok: false, reason: "not_found", state: null };
    if (current.state !== "pending") return { ok: false, reason: "not_pending", state: current.state };
    let grant: GrantView | null = null;
    if (decision === "approve" && scope !== "once") {
      const lifetime = SCOPE_LIFETIME_MS[scope];
      const grantId = newId("grt");
      this.sql(
        "INSERT INTO grants (id, asked_by, app, kind, scope, created_at, expires_at, approval_id, session, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
        grantId,
        current.asked_by,
        current.app,
        current.kind,
        scope,
        now,
        lifetime === null ? null : now + lifetime,
        id,
        session,
      );
      grant = grantView(this.sql("SELECT * FROM grants WHERE id = ?", grantId)[0]);
    }
    this.sql(
      "UPDATE approvals SET state = ?, answered_by = 'you', answered_at = ?, answer_session = ?, answer_scope = ?, grant_id = ? WHERE id = ? AND state = 'pending'",
      decision === "approve" ? "approved" : "denied",
      now,
      session,
      decision === "approve" ? scope : null,
      grant?.id ?? null,
      id,
    );
    this.wake(id);
    return { ok: true, approval: approvalView(this.row(id)!, now), grant };
  }

  /** The grants that still answer: not revoked and not past their expiry. */
  async grants(now: number): Promise<GrantView[]> {
    return this.sql(
      "SELECT * FROM grants WHERE revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?) ORDER BY created_at DESC",
      now,
    ).map(grantView);
  }

  /**
   * Deletes every approval and grant `askedBy` left (an app that was uninstalled): a later app
   * installed under the same name neither reads them nor is answered by them. A long-poll on one
   * of them wakes and finds nothing.
   */
  async forgetAsker(askedBy: string): Promise<{ approvals: number; grants: number }> {
    const ids = this.sql("SELECT id FROM approvals WHERE asked_by = ?", askedBy).map((r) => String(r.id));
    const grants = this.sql("SELECT id FROM grants WHERE asked_by = ?", askedBy).length;
    this.ctx.storage.transactionSync(() => {
      this.sql("DELETE FROM approvals WHERE asked_by = ?", askedBy);
      this.sql("DELETE FROM grants WHERE asked_by = ?", askedBy);
    });
    for (const id of ids) this.wake(id);
    return { approvals: ids.length, grants };
  }

  /** Revokes a live grant; null when there is no live grant of that id. */
  async revokeGrant(id: string, now: number): Promise<GrantView | null> {
    const row = this.sql(
      "SELECT * FROM grants WHERE id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)",
      id,
      now,
    )[0];
    if (!row) return null;
    this.sql("UPDATE grants SET revoked_at = ? WHERE id = ?", now, id);
    return grantView(row);
  }
}
