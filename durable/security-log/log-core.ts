// The security log's logic over a tiny SQL port, so it runs the same in the Durable Object
// (ctx.storage.sql) and in Node tests (an in-memory SQLite). One writer: every write goes
// through one promise queue, so rows get gapless seqs and each mac chains on the last; an
// append that finds the queue empty is written at once, in its caller's turn.
import { GatewayError } from "../../kernel/contracts/errors";
import { hexOf } from "../../kernel/crypto/hex";
import {
  SecurityEventInputSchema,
  SecurityEventQuerySchema,
  SecurityLogAnchorSchema,
  type AppendResult,
  type RetentionResult,
  type RotateResult,
  type SecurityEventPage,
  type SecurityEventRow,
  type SecurityLogHead,
  type SecurityLogSegment,
  type VerifyResult,
  type SecurityLogAnchor,
  type AnchorStanding,
  type WitnessAdmitted,
} from "../../kernel/contracts/security-event";
import { canonicalJson, toJsonValue, type JsonObject } from "./canonical-json";
import {
  canonicalRowBody,
  GENESIS_PREV_MAC,
  isChainKeyHex,
  sealRow,
  type SealedRow,
  type MacKey,
  type ChainedFields,
  type StoredRow,
} from "./chain-mac";
import { maskCredentialShapes } from "../../kernel/text/text-safety";
import { redactDetail, redactPrincipal, redactSubject, truncateText, maskOrWithhold, type TextMasker } from "./redact";
import { CHECKPOINT_SCHEMA_STATEMENTS, EPOCH_SCHEMA_STATEMENTS, SCHEMA_STATEMENTS } from "./schema";
import { removalFromRow, ROTATED_KIND, SEGMENT_REMOVED_KIND, verifyChain } from "./verify-chain";
import { admitWitnessLog, cosignAsWitness, witnessedCheckpoint, type WitnessAnswer } from "./witness";
import { EPOCH_KIND, hexToBytes, importMacKey, keysHeld, singleKey, stepEpochKey } from "./epoch-key";
import {
  checkpointBody,
  CHECKPOINT_KIND,
  COSIGNED_KIND,
  fromBase64,
  generateSigningKey,
  GENESIS_ROOT,
  importSigningKey,
  RootLeaves,
  originOf,
  signNote,
  toBase64,
  verifierKey,
  type SigningKey,
} from "./checkpoint";

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

/** The checkpoint the log signed last, as exported. */
export interface CheckpointExport {
  /** The signed note (C2SP signed-note text). */
  note: string;
  /** The C2SP verifier key that checks it (the log's public key). */
  public_key: string;
  origin: string;
  seq: number;
  /** The seq of the sel.checkpoint row that holds it. */
  row_seq: number;
}

interface EpochState {
  epoch: number;
  bytes: Uint8Array;
  startedMs: number;
}

interface RootState {
  boundarySeq: number;
  root: Uint8Array;
  checkpointMs: number;
  /** Leaves of the rows after the boundary, in seq order. */
  pending: RootLeaves;
}

export const MAX_APPEND_BATCH = 1000;
const VERIFY_PAGE_ROWS = 1000;

/** An event validated and redacted, ready to chain. */
export interface PreparedEvent {
  kind: string;
  principal: string;
  outcome: string;
  subject: string;
  detail: JsonObject;
}

interface LiveSegment {
  id: number;
  startedAt: string;
  firstSeq: number;
  bytes: number;
}

/** A stored row as SQLite returns it: detail is still its canonical-JSON text. */
type EventRecord = Omit<StoredRow, "detail"> & { detail: string };

/** The columns of a row before the chain (the bench's unchained scratch table has them too). */
export const UNCHAINED_COLUMNS = "seq, ts, kind, principal, outcome, subject, detail, segment";
const ROW_COLUMNS = `${UNCHAINED_COLUMNS}, prev_mac, mac`;

/** The bindings for UNCHAINED_COLUMNS, in that order. */
export function unchainedBindings(fields: ChainedFields): SqlBinding[] {
  return [
    fields.seq,
    fields.ts,
    fields.kind,
    fields.principal,
    fields.outcome,
    fields.subject,
    canonicalJson(fields.detail),
    fields.segment,
  ];
}

function reasonOf(error: { issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }> }): string {
  const issue = error.issues[0];
  if (issue === undefined) return "invalid";
  const path = issue.path.map(String).join(".");
  return path ? `${path}: ${issue.message}` : issue.message;
}

/** A stored detail that is not a JSON object is kept as text so its mac fails instead of verify throwing. */
function parseStoredDetail(text: string): JsonObject {
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) return parsed as JsonObject;
  } catch {
    // fall through
  }
  return { "[unreadable detail]": text };
}

/** Every record is selected as ROW_COLUMNS, so it holds exactly a StoredRow's fields, in that order. */
function toStoredRow(record: EventRecord): StoredRow {
  return { ...record, detail: parseStoredDetail(record.detail) };
}

/** The security log: append, head, verify, rotate, retention, query. */
export class SecurityLogCore {
  private queue: Promise<unknown> = Promise.resolve();
  /** Writes queued or running; an append writes at once only when there are none. */
  private queued = 0;
  private activeVerifications = 0;
  private readonly maskers: readonly TextMasker[] | undefined;

  private epochState: EpochState | null = null;
  private rootState: RootState | null = null;
  private signer: SigningKey | null = null;
  private logId = "";
  private publicKey = "";
  private readonly epochs: { everyMs: number } | undefined;
  private readonly checkpoints: { everyRows: number; everyMs: number } | undefined;

  private constructor(
    private readonly sql: SqlPort,
    private key: MacKey,
    private readonly now: () => number,
    private readonly limits: LogLimits,
    private headSeq: number,
    private headMac: string,
    private live: LiveSegment,
    maskers: readonly TextMasker[] | undefined,
    options: CoreOptions,
  ) {
    this.maskers = maskers;
    this.epochs = options.epochs;
    this.checkpoints = options.checkpoints;
  }

  /** Creates the schema if needed, prepares the key once and caches the head; a bad key refuses to open. */
  static async open(sql: SqlPort, keyHex: string, options: CoreOptions = {}): Promise<SecurityLogCore> {
    for (const statement of SCHEMA_STATEMENTS) sql.exec(statement);
    if (options.epochs) for (const statement of EPOCH_SCHEMA_STATEMENTS) sql.exec(statement);
    if (options.checkpoints) for (const statement of CHECKPOINT_SCHEMA_STATEMENTS) sql.exec(statement);
    const now = options.now ?? Date.now;
    // With epochs the log's own stored key wins: the binding only seeds a log that has none.
    const stored = options.epochs
      ? sql
          .exec<{ epoch: number; key_hex: string; started_at: string }>(
            "SELECT epoch, key_hex, started_at FROM chain_key WHERE id = 1",
          )
          .toArray()[0]
      : undefined;
    if (stored === undefined && !isChainKeyHex(keyHex)) throw new GatewayError("sel_key_invalid");
    const keyBytes = hexToBytes(stored?.key_hex ?? keyHex.toLowerCase());
    const key = importMacKey(keyBytes);
    const limits = { ...SEL_LIMITS, ...options.limits };

    const head = sql
      .exec<{ seq: number; mac: string }>("SELECT seq, mac FROM events ORDER BY seq DESC LIMIT 1")
      .toArray()[0];
    const headSeq = head?.seq ?? 0;
    const headMac = head?.mac ?? GENESIS_PREV_MAC;

    let live = sql
      .exec<{ id: number; started_at: string; first_seq: number }>(
        "SELECT id, started_at, first_seq FROM segments WHERE sealed_at IS NULL ORDER BY id DESC LIMIT 1",
      )
      .toArray()[0];
    if (live === undefined) {
      const newest = sql.exec<{ id: number }>("SELECT id FROM segments ORDER BY id DESC LIMIT 1").toArray()[0];
      live = { id: (newest?.id ?? 0) + 1, started_at: new Date(now()).toISOString(), first_seq: headSeq + 1 };
      sql.exec(
        "INSERT INTO segments (id, started_at, sealed_at, first_seq, last_seq, last_mac, bytes) VALUES (?, ?, NULL, ?, NULL, NULL, 0)",
        live.id,
        live.started_at,
        live.first_seq,
      );
    }
    const total = sql
      .exec<{ total: number }>("SELECT COALESCE(SUM(bytes), 0) AS total FROM events WHERE seq >= ?", live.first_seq)
      .toArray()[0];
    const liveSegment = { id: live.id, startedAt: live.started_at, firstSeq: live.first_seq, bytes: total?.total ?? 0 };
    const core = new SecurityLogCore(sql, key, now, limits, headSeq, headMac, liveSegment, options.maskers, options);
    if (options.epochs) {
      if (stored === undefined) {
        const startedAt = new Date(now()).toISOString();
        sql.exec(
          "INSERT INTO chain_key (id, epoch, key_hex, started_at) VALUES (1, 0, ?, ?)",
          hexOf(keyBytes),
          startedAt,
        );
        core.epochState = { epoch: 0, bytes: keyBytes, startedMs: Date.parse(startedAt) };
      } else {
        core.epochState = { epoch: stored.epoch, bytes: keyBytes, startedMs: Date.parse(stored.started_at) };
      }
    }
    if (options.checkpoints) await core.openCheckpoints();
    return core;
  }

  /** Loads or makes the log's id and signing key, and the root state with the leaves since its boundary. */
  private async openCheckpoints(): Promise<void> {
    let identity = this.sql
      .exec<{ log_id: string; signing_pkcs8: string; public_key: string }>(
        "SELECT log_id, signing_pkcs8, public_key FROM log_identity WHERE id = 1",
      )
      .toArray()[0];
    if (identity === undefined) {
      const { pkcs8, publicRaw } = await generateSigningKey();
      const id = hexOf(crypto.getRandomValues(new Uint8Array(8)));
      identity = { log_id: id, signing_pkcs8: toBase64(pkcs8), public_key: toBase64(publicRaw) };
      this.sql.exec(
        "INSERT INTO log_identity (id, log_id, signing_pkcs8, public_key) VALUES (1, ?, ?, ?)",
        identity.log_id,
        identity.signing_pkcs8,
        identity.public_key,
      );
    }
    this.logId = identity.log_id;
    const publicRaw = fromBase64(identity.public_key)!;
    this.signer = await importSigningKey(originOf(this.logId), fromBase64(identity.signing_pkcs8)!, publicRaw);
    this.publicKey = await verifierKey(originOf(this.logId), publicRaw);

    const state = this.sql
      .exec<{ boundary_seq: number; root: string; checkpoint_at: string | null }>(
        "SELECT boundary_seq, root, checkpoint_at FROM root_state WHERE id = 1",
      )
      .toArray()[0];
    const boundarySeq = state?.boundary_seq ?? 0;
    const root = state ? fromBase64(state.root)! : GENESIS_ROOT;
    const pending = new RootLeaves();
    for (const row of this.rowsInSeqOrder(boundarySeq)) pending.addText(row.mac, canonicalRowBody(row));
    const checkpointMs = state?.checkpoint_at ? Date.parse(state.checkpoint_at) : this.now();
    this.rootState = { boundarySeq, root, checkpointMs, pending };
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
    return { seq: this.headSeq, mac: this.headMac, segment: this.live.id };
  }

  /**
   * Where the stored log stands against `anchor` (see AnchorStandingSchema): the anchor writer
   * moves the anchor forward only over a log that `extends` it, so a cut-and-rewritten tail can
   * never carry the anchor along with it.
   */
  anchorStanding(anchor: SecurityLogAnchor): AnchorStanding {
    if (anchor.seq === 0) return "extends";
    if (anchor.seq > this.headSeq) return "truncated";
    const row = this.sql.exec<{ mac: string }>("SELECT mac FROM events WHERE seq = ?", anchor.seq).toArray()[0];
    if (row) return row.mac === anchor.mac ? "extends" : "forked";
    const removals = this.sql
      .exec<EventRecord>(`SELECT ${ROW_COLUMNS} FROM events WHERE kind = ? ORDER BY seq`, SEGMENT_REMOVED_KIND)
      .toArray()
      .map(toStoredRow);
    for (const removal of removals.map(removalFromRow)) {
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

  private isoNow(): string {
    return new Date(this.now()).toISOString();
  }

  private nextFields(event: PreparedEvent, segment = this.live.id): ChainedFields {
    return { ...event, seq: this.headSeq + 1, ts: this.isoNow(), segment, prev_mac: this.headMac };
  }

  private insertRow(fields: ChainedFields, { mac, bytes }: SealedRow): void {
    this.sql.exec(
      `INSERT INTO events (${ROW_COLUMNS}, bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ...unchainedBindings(fields),
      fields.prev_mac,
      mac,
      bytes,
    );
  }

  private advance(fields: ChainedFields, { mac, bytes, macUtf8, bodyUtf8 }: SealedRow): void {
    this.headSeq = fields.seq;
    this.headMac = mac;
    this.live.bytes += bytes;
    this.rootState?.pending.add(macUtf8, bodyUtf8);
  }

  private async appendLocked(event: PreparedEvent): Promise<AppendResult> {
    const result = this.writeRowLocked(event);
    await this.dueAfterRow()?.();
    return result;
  }

  /** Writes one event's row, after the row opening a new epoch if the clock says one is due. */
  private writeRowLocked(event: PreparedEvent): AppendResult {
    if (this.epochState && this.epochs && this.now() - this.epochState.startedMs >= this.epochs.everyMs)
      this.openEpochLocked();
    const fields = this.nextFields(event);
    const sealed = sealRow(this.key, fields);
    this.insertRow(fields, sealed);
    this.advance(fields, sealed);
    return { seq: fields.seq, mac: sealed.mac };
  }

  /** The rotation (size) or checkpoint the rows so far have made due, if any. */
  private dueAfterRow(): (() => Promise<void>) | null {
    if (this.live.bytes > this.limits.rotateAtBytes) return async () => void (await this.rotateLocked("size"));
    if (this.isCheckpointDue()) return () => this.checkpointLocked();
    return null;
  }

  // --- epochs ------------------------------------------------------------------------

  /**
   * The next epoch's key, one way from the current one; `commit` (inside the transaction that
   * writes the row opening the epoch) stores it over the old one, and the old bytes are zeroed.
   */
  private nextEpoch(): {
    epoch: number;
    key: MacKey;
    commit: (startedAt: string) => void;
    adopt: (startedAt: string) => void;
  } {
    const current = this.epochState!;
    const bytes = stepEpochKey(current.bytes);
    const key = importMacKey(bytes);
    const epoch = current.epoch + 1;
    return {
      epoch,
      key,
      commit: (startedAt) =>
        this.sql.exec(
          "UPDATE chain_key SET epoch = ?, key_hex = ?, started_at = ? WHERE id = 1",
          epoch,
          hexOf(bytes),
          startedAt,
        ),
      adopt: (startedAt) => {
        // The old key's bytes are zeroed; its prepared key is dropped (a verification walking
        // meanwhile may still hold it for the rows of the old epoch).
        current.bytes.fill(0);
        this.epochState = { epoch, bytes, startedMs: Date.parse(startedAt) };
        this.key = key;
      },
    };
  }

  /** The clock's epoch step: a sel.epoch row, signed with the new key, opens it. */
  private openEpochLocked(): void {
    const next = this.nextEpoch();
    const fields = this.nextFields({
      kind: EPOCH_KIND,
      principal: "gateway",
      outcome: "info",
      subject: `epoch ${next.epoch}`,
      detail: { epoch: next.epoch, reason: "interval" },
    });
    const sealed = sealRow(next.key, fields);
    this.sql.transact(() => {
      this.insertRow(fields, sealed);
      next.commit(fields.ts);
    });
    next.adopt(fields.ts);
    this.advance(fields, sealed);
  }

  /** The epoch the log signs in now; null for a log kept with one key. */
  epoch(): number | null {
    return this.epochState?.epoch ?? null;
  }

  // --- checkpoints -------------------------------------------------------------------

  private isCheckpointDue(): boolean {
    const state = this.rootState;
    if (state === null || this.checkpoints === undefined) return false;
    return (
      state.pending.count >= this.checkpoints.everyRows || this.now() - state.checkpointMs >= this.checkpoints.everyMs
    );
  }

  /** Signs the head: closes the interval at the head seq and appends the sel.checkpoint row carrying the note. */
  private async checkpointLocked(): Promise<void> {
    const state = this.rootState!;
    const root = await state.pending.rootAfter(state.root);
    const time = this.isoNow();
    const body = checkpointBody({
      origin: originOf(this.logId),
      seq: this.headSeq,
      root: toBase64(root),
      mac: this.headMac,
      time,
    });
    const note = await signNote(body, this.signer!);
    const covered = { seq: this.headSeq, root: toBase64(root), mac: this.headMac };
    const fields = this.nextFields({
      kind: CHECKPOINT_KIND,
      principal: "gateway",
      outcome: "info",
      subject: `checkpoint ${covered.seq}`,
      detail: { ...covered, time, note },
    });
    const sealed = sealRow(this.key, fields);
    this.sql.transact(() => {
      this.insertRow(fields, sealed);
      this.saveRoot(covered.seq, root, time);
    });
    state.pending.clear();
    this.rootState = { boundarySeq: covered.seq, root, checkpointMs: Date.parse(time), pending: state.pending };
    this.advance(fields, sealed);
  }

  private saveRoot(boundarySeq: number, root: Uint8Array, checkpointAt: string | null): void {
    this.sql.exec(
      "INSERT INTO root_state (id, boundary_seq, root, checkpoint_at) VALUES (1, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET boundary_seq = excluded.boundary_seq, root = excluded.root, checkpoint_at = COALESCE(excluded.checkpoint_at, root_state.checkpoint_at)",
      boundarySeq,
      toBase64(root),
      checkpointAt,
    );
  }

  /**
   * The newest checkpoint covering the head (written now if rows came after the last one), with
   * the public key that checks it: what the owner exports and copies elsewhere.
   */
  async checkpoint(): Promise<CheckpointExport> {
    if (this.rootState === null) throw new GatewayError("sel_checkpoints_off");
    return this.serialize(async () => {
      const latest = this.latestCheckpointRow();
      if (latest === null || latest.seq !== this.headSeq) await this.checkpointLocked();
      return this.exportOf(this.latestCheckpointRow()!);
    });
  }

  /** The newest checkpoint the log holds, without writing one; null before the first. */
  latestCheckpoint(): CheckpointExport | null {
    if (this.rootState === null) return null;
    const row = this.latestCheckpointRow();
    return row === null ? null : this.exportOf(row);
  }

  private latestCheckpointRow(): StoredRow | null {
    const record = this.sql
      .exec<EventRecord>(`SELECT ${ROW_COLUMNS} FROM events WHERE kind = ? ORDER BY seq DESC LIMIT 1`, CHECKPOINT_KIND)
      .toArray()[0];
    return record === undefined ? null : toStoredRow(record);
  }

  private exportOf(row: StoredRow): CheckpointExport {
    return {
      note: String(row.detail.note),
      public_key: this.publicKey,
      origin: originOf(this.logId),
      seq: Number(row.detail.seq),
      row_seq: row.seq,
    };
  }

  /** Records a witness's cosignature of one of this log's checkpoints (a sel.cosigned row). */
  async recordCosignature(input: {
    checkpoint_seq: number;
    witness: string;
    body: string;
    cosignature: string;
  }): Promise<AppendResult> {
    return this.serialize(async () => {
      const fields = this.nextFields({
        kind: COSIGNED_KIND,
        principal: "gateway",
        outcome: "info",
        subject: `checkpoint ${input.checkpoint_seq} witnessed`,
        detail: {
          checkpoint_seq: input.checkpoint_seq,
          witness: input.witness,
          body: input.body,
          cosignature: input.cosignature,
        },
      });
      const sealed = sealRow(this.key, fields);
      this.insertRow(fields, sealed);
      this.advance(fields, sealed);
      return { seq: fields.seq, mac: sealed.mac };
    });
  }

  /** As a witness: cosigns another log's checkpoint that extends the one held for its origin. */
  async witness(note: unknown, vkey: unknown): Promise<WitnessAnswer> {
    if (this.signer === null) throw new GatewayError("sel_checkpoints_off");
    if (typeof note !== "string" || typeof vkey !== "string" || note.length > 8192 || vkey.length > 512) {
      throw new GatewayError("witness_checkpoint_invalid", { vars: { reason: "a note and a key are required" } });
    }
    const signer = this.signer;
    return this.serialize(() => cosignAsWitness(this.sql, signer, this.logId, note, vkey, this.now()));
  }

  /** As a witness: the owner admits the log whose checkpoints `vkey` signs. */
  async admitWitnessLog(vkey: string): Promise<WitnessAdmitted> {
    if (this.signer === null) throw new GatewayError("sel_checkpoints_off");
    return this.serialize(async () => admitWitnessLog(this.sql, vkey, this.now()));
  }

  /** As a witness: the newest checkpoint cosigned for an origin. */
  witnessed(origin: string): { note: string; seq: number; cosigned_at: string } | null {
    return witnessedCheckpoint(this.sql, origin);
  }

  private async rotateLocked(reason: string): Promise<RotateResult> {
    const sealed = this.live;
    if (this.headSeq < sealed.firstSeq) {
      return { rotated: false, sealed_segment: null, segment: sealed.id, seq: this.headSeq };
    }
    const fields = this.nextFields(
      {
        kind: ROTATED_KIND,
        principal: "gateway",
        outcome: "info",
        subject: `segment ${sealed.id} sealed`,
        detail: {
          reason: truncateText(maskOrWithhold(reason, this.maskers ?? [maskCredentialShapes])),
          sealed_segment: sealed.id,
          first_seq: sealed.firstSeq,
          last_seq: this.headSeq,
          last_mac: this.headMac,
          bytes: sealed.bytes,
        },
      },
      sealed.id + 1,
    );
    // A rotation ends an interval of the keyless root (its row names the root before it) and an epoch.
    const root = this.rootState ? await this.rootState.pending.rootAfter(this.rootState.root) : null;
    if (root !== null) fields.detail.root = toBase64(root);
    const next = this.epochState ? this.nextEpoch() : null;
    if (next !== null) fields.detail.epoch = next.epoch;
    const sealedRow = sealRow(next?.key ?? this.key, fields);
    this.sql.transact(() => {
      next?.commit(fields.ts);
      if (root !== null) this.saveRoot(this.headSeq, root, null);
      this.sql.exec(
        "UPDATE segments SET sealed_at = ?, last_seq = ?, last_mac = ?, bytes = ? WHERE id = ?",
        fields.ts,
        this.headSeq,
        this.headMac,
        sealed.bytes,
        sealed.id,
      );
      this.sql.exec(
        "INSERT INTO segments (id, started_at, sealed_at, first_seq, last_seq, last_mac, bytes) VALUES (?, ?, NULL, ?, NULL, NULL, 0)",
        fields.segment,
        fields.ts,
        fields.seq,
      );
      this.insertRow(fields, sealedRow);
    });
    this.live = { id: fields.segment, startedAt: fields.ts, firstSeq: fields.seq, bytes: 0 };
    next?.adopt(fields.ts);
    if (root !== null) {
      this.rootState!.pending.clear();
      this.rootState = { ...this.rootState!, boundarySeq: fields.seq - 1, root };
    }
    this.advance(fields, sealedRow);
    await this.retentionLocked(this.now());
    return { rotated: true, sealed_segment: sealed.id, segment: fields.segment, seq: fields.seq };
  }

  private async retentionLocked(nowMs: number): Promise<RetentionResult> {
    // A verification walking the oldest rows would see them vanish; retention waits for the next call.
    if (this.activeVerifications > 0) return { removed: [], deferred: true };
    const sealed = this.sql
      .exec<{ id: number; sealed_at: string; first_seq: number; last_seq: number; last_mac: string; bytes: number }>(
        "SELECT id, sealed_at, first_seq, last_seq, last_mac, bytes FROM segments WHERE sealed_at IS NOT NULL ORDER BY id",
      )
      .toArray();
    const cutoff = nowMs - this.limits.retentionMs;
    let archived = sealed.reduce((sum, segment) => sum + segment.bytes, 0);
    const plan: Array<{ segment: (typeof sealed)[number]; reason: "age" | "size" }> = [];
    for (const segment of sealed) {
      if (Date.parse(segment.sealed_at) >= cutoff) break;
      plan.push({ segment, reason: "age" });
      archived -= segment.bytes;
    }
    for (const segment of sealed.slice(plan.length)) {
      if (archived <= this.limits.archiveCeilingBytes) break;
      plan.push({ segment, reason: "size" });
      archived -= segment.bytes;
    }

    const removed: RetentionResult["removed"] = [];
    for (const { segment, reason } of plan) {
      const fields = this.nextFields({
        kind: SEGMENT_REMOVED_KIND,
        principal: "gateway",
        outcome: "info",
        subject: `segment ${segment.id} removed`,
        detail: {
          reason,
          segment: segment.id,
          first_seq: segment.first_seq,
          last_seq: segment.last_seq,
          last_mac: segment.last_mac,
          bytes: segment.bytes,
          sealed_at: segment.sealed_at,
        },
      });
      const sealed = sealRow(this.key, fields);
      this.sql.transact(() => {
        this.sql.exec("DELETE FROM events WHERE seq BETWEEN ? AND ?", segment.first_seq, segment.last_seq);
        this.sql.exec("DELETE FROM segments WHERE id = ?", segment.id);
        this.insertRow(fields, sealed);
      });
      this.advance(fields, sealed);
      removed.push({
        segment: segment.id,
        first_seq: segment.first_seq,
        last_seq: segment.last_seq,
        last_mac: segment.last_mac,
        reason,
      });
    }
    return { removed, deferred: false };
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
      const removalRows = this.sql
        .exec<EventRecord>(`SELECT ${ROW_COLUMNS} FROM events WHERE kind = ? ORDER BY seq`, SEGMENT_REMOVED_KIND)
        .toArray()
        .map(toStoredRow);
      const keys = this.epochState ? keysHeld(this.epochState.epoch, this.key) : singleKey(this.key);
      return await verifyChain(keys, this.rowsInSeqOrder(), { removalRows, anchor });
    } finally {
      this.activeVerifications--;
    }
  }

  /** Every stored row after `after` in seq order, paged: what the verifiers and the root walk. */
  *rowsInSeqOrder(after = 0): Generator<StoredRow> {
    for (;;) {
      const page = this.sql
        .exec<EventRecord>(
          `SELECT ${ROW_COLUMNS} FROM events WHERE seq > ? ORDER BY seq LIMIT ?`,
          after,
          VERIFY_PAGE_ROWS,
        )
        .toArray();
      if (page.length === 0) return;
      for (const record of page) yield toStoredRow(record);
      after = page[page.length - 1]!.seq;
    }
  }

  /** Rows newest first, filtered; page with next_before_seq. */
  query(filterInput: unknown): SecurityEventPage {
    const parsed = SecurityEventQuerySchema.safeParse(filterInput ?? {});
    if (!parsed.success) throw new GatewayError("bad_request", { vars: { reason: reasonOf(parsed.error) } });
    const filter = parsed.data;
    const where: string[] = [];
    const bindings: SqlBinding[] = [];
    if (filter.kind !== undefined) {
      where.push("kind = ?");
      bindings.push(filter.kind);
    }
    if (filter.principal !== undefined) {
      where.push("principal = ?");
      bindings.push(filter.principal);
    }
    if (filter.outcome !== undefined) {
      where.push("outcome = ?");
      bindings.push(filter.outcome);
    }
    if (filter.since !== undefined) {
      where.push("ts >= ?");
      bindings.push(new Date(Date.parse(filter.since)).toISOString());
    }
    if (filter.before_seq !== undefined) {
      where.push("seq < ?");
      bindings.push(filter.before_seq);
    }
    const clause = where.length > 0 ? `WHERE ${where.join(" AND ")}` : "";
    const records = this.sql
      .exec<EventRecord>(
        `SELECT ${ROW_COLUMNS} FROM events ${clause} ORDER BY seq DESC LIMIT ?`,
        ...bindings,
        filter.limit + 1,
      )
      .toArray();
    const hasMore = records.length > filter.limit;
    const events = records.slice(0, filter.limit).map((record) => toStoredRow(record) as SecurityEventRow);
    return { events, next_before_seq: hasMore ? events[events.length - 1]!.seq : null };
  }

  /** Every kept segment, oldest first; the live one carries its running byte count. */
  segments(): SecurityLogSegment[] {
    return this.sql
      .exec<SecurityLogSegment>(
        "SELECT id, started_at, sealed_at, first_seq, last_seq, last_mac, bytes FROM segments ORDER BY id",
      )
      .toArray()
      .map((segment) => (segment.id === this.live.id ? { ...segment, bytes: this.live.bytes } : segment));
  }
}
