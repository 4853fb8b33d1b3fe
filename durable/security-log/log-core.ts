// The security log's logic over a tiny SQL port, so it runs the same in the Durable Object
// (ctx.storage.sql) and in Node tests (an in-memory SQLite). One writer: every write goes
// through one promise queue, so rows get gapless seqs and each mac chains on the last; an
// append that finds the queue empty is written at once, in its caller's turn. What a write
// does is in the modules beside it: the chain's position (log-chain.ts), epochs
// (log-epochs.ts), checkpoints (log-checkpoints.ts), rotation and retention (log-segments.ts)
// and the stored rows (stored-rows.ts).
import { GatewayError } from "../../kernel/contracts/errors";
import {
  SecurityEventInputSchema,
  SecurityEventQuerySchema,
  SecurityLogAnchorSchema,
  type AppendResult,
  type RetentionResult,
  type RotateResult,
  type SecurityEventPage,
  type SecurityLogHead,
  type SecurityLogSegment,
  type VerifyResult,
  type SecurityLogAnchor,
  type AnchorStanding,
  type WitnessAdmitted,
} from "../../kernel/contracts/security-event";
import type { JsonObject } from "../../kernel/crypto/canonical-json";
import { toJsonValue } from "./json-value";
import { redactDetail, redactPrincipal, redactSubject, type TextMasker } from "./redact";
import { removalFromRow, verifyChain } from "../../kernel/chain/verify-chain";
import { admitWitnessLog, cosignAsWitness, witnessedCheckpoint, type WitnessAnswer } from "./witness";
import { keysHeld, singleKey } from "../../kernel/chain/epoch-key";
import { LogChain } from "./log-chain";
import { isEpochDue, openEpochLocked } from "./log-epochs";
import {
  checkpointExport,
  checkpointLocked,
  cosignedEvent,
  isCheckpointDue,
  latestCheckpointRow,
  openCheckpoints,
  type CheckpointExport,
  type LogIdentity,
} from "./log-checkpoints";
import { retentionLocked, rotateLocked } from "./log-segments";
import { queryRows, removalRows, rowsInSeqOrder } from "./stored-rows";

export type SqlBinding = string | number | null;

/** The slice of SQLite the log needs: DO `ctx.storage.sql` + `transactionSync`, or better-sqlite3 in tests. */
export interface SqlPort {
  exec<T extends Record<string, unknown>>(query: string, ...bindings: SqlBinding[]): { toArray(): T[] };
  transact<T>(fn: () => T): T;
}

export interface LogLimits {
  /** The write that takes the live segment past this many bytes seals it (SEL-06: 16 MiB). */
  rotateAtBytes: number;
  /** Sealed segments older than this are removed (SEL-07: 365 days). */
  retentionMs: number;
  /** Sealed segments are then removed oldest-first until they hold at most this (SEL-07: 512 MiB). */
  archiveCeilingBytes: number;
}

export const SEL_LIMITS: Readonly<LogLimits> = Object.freeze({
  rotateAtBytes: 16 * 1024 * 1024,
  retentionMs: 365 * 24 * 60 * 60 * 1000,
  archiveCeilingBytes: 512 * 1024 * 1024,
});

export interface CoreOptions {
  /** Clock in epoch ms; tests inject one. */
  now?: () => number;
  /** Tests shrink these; the Durable Object runs SEL_LIMITS with the owner's retention (logs.security_retention_days). */
  limits?: Partial<LogLimits>;
  /** Replaces the shape maskers (tests inject a throwing one). */
  maskers?: readonly TextMasker[];
  /**
   * Forward-secure epochs: the MAC key steps one way at every rotation and at the first row
   * once `everyMs` has passed, and the previous key is erased. The Durable Object always sets
   * it; without it the log keeps one key for ever (the unit tests written before epochs).
   */
  epochs?: { everyMs: number };
  /** Signed checkpoints: one after `everyRows` rows, or at the first row once `everyMs` has passed. */
  checkpoints?: { everyRows: number; everyMs: number };
}

/** What the Durable Object runs: an epoch an hour at most, a checkpoint every 1000 rows or 5 minutes. */
export const SEL_CHECKPOINTS = Object.freeze({ everyRows: 1000, everyMs: 5 * 60 * 1000 });

export const MAX_APPEND_BATCH = 1000;

/** An event validated and redacted, ready to chain. */
export interface PreparedEvent {
  kind: string;
  principal: string;
  outcome: string;
  subject: string;
  detail: JsonObject;
}

function reasonOf(error: { issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }> }): string {
  const issue = error.issues[0];
  if (issue === undefined) return "invalid";
  const path = issue.path.map(String).join(".");
  return path ? `${path}: ${issue.message}` : issue.message;
}

/** The security log: append, head, verify, rotate, retention, query. */
export class SecurityLogCore {
  private queue: Promise<unknown> = Promise.resolve();
  /** Writes queued or running; an append writes at once only when there are none. */
  private queued = 0;
  private activeVerifications = 0;
  /** Who signs checkpoints; null for a log that signs none. */
  private identity: LogIdentity | null = null;
  private readonly maskers: readonly TextMasker[] | undefined;
  private readonly epochs: { everyMs: number } | undefined;
  private readonly checkpoints: { everyRows: number; everyMs: number } | undefined;

  private constructor(
    private readonly chain: LogChain,
    private readonly limits: LogLimits,
    options: CoreOptions,
  ) {
    this.maskers = options.maskers;
    this.epochs = options.epochs;
    this.checkpoints = options.checkpoints;
  }

  /** Creates the schema if needed, prepares the key once and caches the head; a bad key refuses to open. */
  static async open(sql: SqlPort, keyHex: string, options: CoreOptions = {}): Promise<SecurityLogCore> {
    const limits = { ...SEL_LIMITS, ...options.limits };
    const core = new SecurityLogCore(LogChain.open(sql, keyHex, options), limits, options);
    if (options.checkpoints) core.identity = await openCheckpoints(core.chain);
    return core;
  }

  private get sql(): SqlPort {
    return this.chain.sql;
  }

  private now(): number {
    return this.chain.now();
  }

  // --- writing ---------------------------------------------------------------------

  /** Appends one event (redacted first) and returns its seq and mac. */
  async append(input: unknown): Promise<AppendResult> {
    return this.appendPrepared(this.prepare(input));
  }

  /** Appends events in order, all or none validated up front; returns each one's seq and mac. */
  async appendMany(inputs: unknown): Promise<AppendResult[]> {
    if (!Array.isArray(inputs))
      throw new GatewayError("sel_event_invalid", { vars: { reason: "appendMany takes an array" } });
    if (inputs.length > MAX_APPEND_BATCH) {
      throw new GatewayError("sel_event_invalid", { vars: { reason: `at most ${MAX_APPEND_BATCH} events per call` } });
    }
    const prepared = inputs.map((input) => this.prepare(input));
    return this.serialize(async () => {
      const results: AppendResult[] = [];
      for (const event of prepared) results.push(await this.appendLocked(event));
      return results;
    });
  }

  /** The newest row's seq and mac and the live segment: what an anchor writer records. */
  head(): SecurityLogHead {
    return { seq: this.chain.headSeq, mac: this.chain.headMac, segment: this.chain.live.id };
  }

  /**
   * Where the stored log stands against `anchor` (see AnchorStandingSchema): the anchor writer
   * moves the anchor forward only over a log that `extends` it, so a cut-and-rewritten tail can
   * never carry the anchor along with it.
   */
  anchorStanding(anchor: SecurityLogAnchor): AnchorStanding {
    if (anchor.seq === 0) return "extends";
    if (anchor.seq > this.chain.headSeq) return "truncated";
    const row = this.sql.exec<{ mac: string }>("SELECT mac FROM events WHERE seq = ?", anchor.seq).toArray()[0];
    if (row) return row.mac === anchor.mac ? "extends" : "forked";
    for (const removal of removalRows(this.sql).map(removalFromRow)) {
      if (removal === null) continue;
      if (removal.last_seq === anchor.seq) return removal.last_mac === anchor.mac ? "extends" : "forked";
      if (removal.first_seq <= anchor.seq && anchor.seq <= removal.last_seq) return "extends";
    }
    return "forked";
  }

  /** Seals the live segment now (SEL-08) and runs retention; an empty live segment is left alone. */
  async rotate(reason: unknown): Promise<RotateResult> {
    const why = typeof reason === "string" && reason.length > 0 ? reason : "on_demand";
    return this.serialize(() => this.rotateLocked(why));
  }

  /** Removes sealed segments past 365 days, then oldest-first down to 512 MiB; logs each removal. */
  async enforceRetention(nowMs?: unknown): Promise<RetentionResult> {
    const at = typeof nowMs === "number" && Number.isFinite(nowMs) ? nowMs : this.now();
    return this.serialize(() => this.retentionLocked(at));
  }

  private serialize<T>(work: () => Promise<T>): Promise<T> {
    this.queued++;
    const run = this.queue.then(work, work).finally(() => this.queued--);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Validates and redacts an event without writing it; also answers its coalescing group,
   * redacted like a subject (see refusal-windows.ts). Throws sel_event_invalid.
   */
  prepareWithGroup(input: unknown): { event: PreparedEvent; group: string | null } {
    const parsed = SecurityEventInputSchema.safeParse(input);
    if (!parsed.success) throw new GatewayError("sel_event_invalid", { vars: { reason: reasonOf(parsed.error) } });
    const options = { secrets: parsed.data.secrets, maskers: this.maskers };
    const group = parsed.data.group === undefined ? null : redactSubject(parsed.data.group, options);
    return { event: this.prepare(input), group };
  }

  /**
   * Chains an event prepareWithGroup answered, or a row the log writes itself (a refusal count).
   * With no write queued or running, nothing can come between this row and the one before it,
   * so it is MACed and INSERTed at once, in the caller's turn; a rotation or checkpoint it makes
   * due is queued before this returns, so nothing comes between them either.
   */
  async appendPrepared(event: PreparedEvent): Promise<AppendResult> {
    if (this.queued > 0) return this.serialize(() => this.appendLocked(event));
    const result = this.writeRowLocked(event);
    const due = this.dueAfterRow();
    if (due !== null) await this.serialize(due);
    return result;
  }

  private prepare(input: unknown): PreparedEvent {
    const parsed = SecurityEventInputSchema.safeParse(input);
    if (!parsed.success) throw new GatewayError("sel_event_invalid", { vars: { reason: reasonOf(parsed.error) } });
    const { kind, principal, outcome, subject = "", detail = {}, secrets } = parsed.data;
    const options = { secrets, maskers: this.maskers };
    return {
      kind,
      principal: redactPrincipal(principal, options),
      outcome,
      subject: redactSubject(subject, options),
      detail: redactDetail(toJsonValue(detail) as JsonObject, options),
    };
  }

  private async appendLocked(event: PreparedEvent): Promise<AppendResult> {
    const result = this.writeRowLocked(event);
    await this.dueAfterRow()?.();
    return result;
  }

  /** Writes one event's row, after the row opening a new epoch if the clock says one is due. */
  private writeRowLocked(event: PreparedEvent): AppendResult {
    if (isEpochDue(this.chain, this.epochs)) openEpochLocked(this.chain);
    return this.chain.writeRow(event);
  }

  /** The rotation (size) or checkpoint the rows so far have made due, if any. */
  private dueAfterRow(): (() => Promise<void>) | null {
    if (this.chain.live.bytes > this.limits.rotateAtBytes) return async () => void (await this.rotateLocked("size"));
    if (isCheckpointDue(this.chain, this.checkpoints)) return () => checkpointLocked(this.chain, this.identity!);
    return null;
  }

  private rotateLocked(reason: string): Promise<RotateResult> {
    return rotateLocked(this.chain, reason, this.maskers, () => this.retentionLocked(this.now()));
  }

  private async retentionLocked(nowMs: number): Promise<RetentionResult> {
    // A verification walking the oldest rows would see them vanish; retention waits for the next call.
    if (this.activeVerifications > 0) return { removed: [], deferred: true };
    return retentionLocked(this.chain, nowMs, this.limits);
  }

  /** The epoch the log signs in now; null for a log kept with one key. */
  epoch(): number | null {
    return this.chain.epochState?.epoch ?? null;
  }

  // --- checkpoints and witnessing ----------------------------------------------------

  /**
   * The newest checkpoint covering the head (written now if rows came after the last one), with
   * the public key that checks it: what the owner exports and copies elsewhere.
   */
  async checkpoint(): Promise<CheckpointExport> {
    if (this.chain.rootState === null) throw new GatewayError("sel_checkpoints_off");
    const identity = this.identity!;
    return this.serialize(async () => {
      const latest = latestCheckpointRow(this.sql);
      if (latest === null || latest.seq !== this.chain.headSeq) await checkpointLocked(this.chain, identity);
      return checkpointExport(latestCheckpointRow(this.sql)!, identity);
    });
  }

  /** The newest checkpoint the log holds, without writing one; null before the first. */
  latestCheckpoint(): CheckpointExport | null {
    if (this.chain.rootState === null) return null;
    const row = latestCheckpointRow(this.sql);
    return row === null ? null : checkpointExport(row, this.identity!);
  }

  /** Records a witness's cosignature of one of this log's checkpoints (a sel.cosigned row). */
  async recordCosignature(input: {
    checkpoint_seq: number;
    witness: string;
    body: string;
    cosignature: string;
  }): Promise<AppendResult> {
    return this.serialize(async () => this.chain.writeRow(cosignedEvent(input)));
  }

  /** As a witness: cosigns another log's checkpoint that extends the one held for its origin. */
  async witness(note: unknown, vkey: unknown): Promise<WitnessAnswer> {
    if (this.identity === null) throw new GatewayError("sel_checkpoints_off");
    if (typeof note !== "string" || typeof vkey !== "string" || note.length > 8192 || vkey.length > 512) {
      throw new GatewayError("witness_checkpoint_invalid", { vars: { reason: "a note and a key are required" } });
    }
    const { signer, logId } = this.identity;
    return this.serialize(() => cosignAsWitness(this.sql, signer, logId, note, vkey, this.now()));
  }

  /** As a witness: the owner admits the log whose checkpoints `vkey` signs. */
  async admitWitnessLog(vkey: string): Promise<WitnessAdmitted> {
    if (this.identity === null) throw new GatewayError("sel_checkpoints_off");
    return this.serialize(async () => admitWitnessLog(this.sql, vkey, this.now()));
  }

  /** As a witness: the newest checkpoint cosigned for an origin. */
  witnessed(origin: string): { note: string; seq: number; cosigned_at: string } | null {
    return witnessedCheckpoint(this.sql, origin);
  }

  // --- reading ---------------------------------------------------------------------

  /**
   * Verifies every stored row (a row past the cached head included: that is how a forged
   * tail shows), and the anchor if one is given. Appends go on meanwhile; retention waits.
   */
  async verify(anchorInput: unknown): Promise<VerifyResult> {
    let anchor = null;
    if (anchorInput !== null && anchorInput !== undefined) {
      const parsed = SecurityLogAnchorSchema.safeParse(anchorInput);
      if (!parsed.success)
        throw new GatewayError("bad_request", { vars: { reason: `anchor ${reasonOf(parsed.error)}` } });
      anchor = parsed.data;
    }
    this.activeVerifications++;
    try {
      const removals = removalRows(this.sql);
      const { epochState, key } = this.chain;
      const keys = epochState ? keysHeld(epochState.epoch, key) : singleKey(key);
      return await verifyChain(keys, rowsInSeqOrder(this.sql), { removalRows: removals, anchor });
    } finally {
      this.activeVerifications--;
    }
  }

  /** Rows newest first, filtered; page with next_before_seq. */
  query(filterInput: unknown): SecurityEventPage {
    const parsed = SecurityEventQuerySchema.safeParse(filterInput ?? {});
    if (!parsed.success) throw new GatewayError("bad_request", { vars: { reason: reasonOf(parsed.error) } });
    return queryRows(this.sql, parsed.data);
  }

  /** Every kept segment, oldest first; the live one carries its running byte count. */
  segments(): SecurityLogSegment[] {
    const live = this.chain.live;
    return this.sql
      .exec<SecurityLogSegment>(
        "SELECT id, started_at, sealed_at, first_seq, last_seq, last_mac, bytes FROM segments ORDER BY id",
      )
      .toArray()
      .map((segment) => (segment.id === live.id ? { ...segment, bytes: live.bytes } : segment));
  }
}
