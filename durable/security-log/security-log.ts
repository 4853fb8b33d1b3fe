// The SecurityLog Durable Object: the one writer of the HMAC-chained security event log
// (SEL-*). Native DO RPC: callers hold a typed stub and call these methods directly.
import { claimStoreIdentity } from "../store-identity";
import { DurableObject } from "cloudflare:workers";
import type {
  AnchorStanding,
  AppendResult,
  RetentionResult,
  RotateResult,
  SecurityEventInput,
  SecurityEventPage,
  SecurityEventQuery,
  SecurityLogAnchor,
  SecurityLogHead,
  SecurityLogSegment,
  VerifyResult,
} from "../../kernel/contracts/security-event";
import type { Env } from "../env";
import { SecurityLogCore, SEL_CHECKPOINTS, type SqlPort } from "./log-core";
import type { CheckpointExport } from "./log-checkpoints";
import { EPOCH_MS } from "../../kernel/chain/epoch-key";
import { GatewayError, type ErrorCode } from "../../kernel/contracts/errors";
import type { WitnessAnswer } from "./witness";
import type { CosignatureRecord, WitnessAdmitted } from "../../kernel/contracts/security-event";
import { CoalescingLog } from "./coalescing-log";
import { exportStore } from "../store-export";
import type { SecurityLogExport } from "../../kernel/contracts/durability";

function storageSqlPort(ctx: DurableObjectState): SqlPort {
  const sql = ctx.storage.sql;
  return {
    // Bound, not wrapped: a wrapper would copy every row's bindings into a second array.
    exec: sql.exec.bind(sql) as unknown as SqlPort["exec"],
    transact: (fn) => ctx.storage.transactionSync(fn),
  };
}

/** logs.security_retention_days of this start (config.json, 30..3650 days); SEL-07's 365 days otherwise. */
function retentionOf(env: Env): { retentionMs?: number } {
  const days = Number(env.SEL_RETENTION_DAYS);
  return Number.isInteger(days) && days >= 30 && days <= 3650 ? { retentionMs: days * 24 * 60 * 60 * 1000 } : {};
}

/** Append-only, HMAC-chained, rotating, verifiable record of every security decision. */
export class SecurityLog extends DurableObject<Env> {
  /** Protected, not private: the bench's subclass measures appends through it (bench/workers/sel-bench.ts). */
  protected core!: SecurityLogCore;
  private log!: CoalescingLog;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // Schema, key import, head cache and the counts a previous run left, before any call is
    // served; a bad SEL_KEY fails every call.
    void ctx.blockConcurrencyWhile(async () => {
      const sql = storageSqlPort(ctx);
      claimStoreIdentity(ctx.storage.sql);
      // Forward-secure epochs and signed checkpoints always: SEL_KEY only seeds a log that has no key yet.
      this.core = await SecurityLogCore.open(sql, env.SEL_KEY, {
        limits: retentionOf(env),
        epochs: { everyMs: EPOCH_MS },
        checkpoints: SEL_CHECKPOINTS,
      });
      this.log = await CoalescingLog.open(this.core, sql, {
        scheduleAt: (ms) => void ctx.storage.setAlarm(ms).catch(() => undefined),
      });
    });
  }

  /** Records one event (redacted before it is written); an identical refusal in its window is counted. */
  async append(input: SecurityEventInput): Promise<AppendResult> {
    return this.log.append(input);
  }

  /** Records events in order (at most 1000); none is written if any is invalid. */
  async appendMany(inputs: SecurityEventInput[]): Promise<AppendResult[]> {
    return this.log.appendMany(inputs);
  }

  /** A refusal window ended: its count becomes a row. */
  async alarm(): Promise<void> {
    await this.log.flushDue();
  }

  /** The newest row's seq and mac and the live segment id, for the anchor writer. */
  async head(): Promise<SecurityLogHead> {
    return this.core.head();
  }

  /** Where the log stands against an anchor kept outside it (extends, forked, truncated). */
  async anchorStanding(anchor: SecurityLogAnchor): Promise<AnchorStanding> {
    return this.core.anchorStanding(anchor);
  }

  /** Walks every kept row; with an anchor, also detects rows cut off the end. */
  async verify(anchor: SecurityLogAnchor | null): Promise<VerifyResult> {
    return this.log.verify(anchor);
  }

  /** Newest-first rows matching the filter, with a paging cursor. */
  async query(filter: SecurityEventQuery = {}): Promise<SecurityEventPage> {
    return this.log.query(filter);
  }

  /** Seals the live segment on demand (POST /api/sel/rotate) and applies retention. */
  async rotate(reason: string): Promise<RotateResult> {
    return this.log.rotate(reason);
  }

  /** Removes sealed segments past 365 days, then oldest-first down to 512 MiB; each removal is a row. */
  async enforceRetention(nowMs?: number): Promise<RetentionResult> {
    return this.log.enforceRetention(nowMs);
  }

  /** Every kept segment, oldest first. */
  async segments(): Promise<SecurityLogSegment[]> {
    return this.core.segments();
  }

  /** The newest checkpoint covering the head (signed now if rows came after the last), with its public key. */
  async checkpoint(): Promise<CheckpointExport> {
    await this.log.flushPending();
    return this.core.checkpoint();
  }

  /**
   * The whole log at one instant, for a backup: pending counts written, a checkpoint signed over
   * the head, then every table read in one synchronous pass while no other call runs; the head
   * is the newest row of that very read, so the archive binds exactly the rows it holds.
   */
  async exportState(): Promise<SecurityLogExport> {
    return this.ctx.blockConcurrencyWhile(async () => {
      await this.log.flushPending();
      const checkpoint = await this.core.checkpoint();
      const store = exportStore(this.ctx.storage.sql);
      const events = store.tables.find((table) => table.name === "events");
      const [seqAt, macAt] = [events?.columns.indexOf("seq") ?? -1, events?.columns.indexOf("mac") ?? -1];
      let head = { seq: 0, mac: "0".repeat(64) };
      for (const row of events?.rows ?? [])
        if (Number(row[seqAt]) > head.seq) head = { seq: Number(row[seqAt]), mac: String(row[macAt]) };
      return { ...store, log: { head, checkpoint } };
    });
  }

  /** The newest checkpoint the log holds, without writing one (the bridge's witness poster reads it). */
  async latestCheckpoint(): Promise<CheckpointExport | null> {
    return this.core.latestCheckpoint();
  }

  /** Records a witness's cosignature of one of this log's checkpoints. */
  async recordCosignature(record: CosignatureRecord): Promise<AppendResult> {
    await this.log.flushPending();
    return this.core.recordCosignature(record);
  }

  /**
   * As a witness for another log: cosigns its checkpoint if it extends the one held. A refusal
   * is an answer (its code and sentence), since an error's type does not survive RPC.
   */
  async witness(
    note: string,
    publicKey: string,
  ): Promise<({ ok: true } & WitnessAnswer) | { ok: false; code: ErrorCode; message: string }> {
    try {
      return { ok: true, ...(await this.core.witness(note, publicKey)) };
    } catch (error) {
      if (error instanceof GatewayError) return { ok: false, code: error.code, message: error.message };
      throw error;
    }
  }

  /** As a witness: the owner admits a log by its verifier key; a refusal is an answer, as for witness(). */
  async admitWitnessLog(
    publicKey: string,
  ): Promise<({ ok: true } & WitnessAdmitted) | { ok: false; code: ErrorCode; message: string }> {
    try {
      return { ok: true, ...(await this.core.admitWitnessLog(publicKey)) };
    } catch (error) {
      if (error instanceof GatewayError) return { ok: false, code: error.code, message: error.message };
      throw error;
    }
  }

  /** As a witness: the newest checkpoint cosigned for an origin. */
  async witnessed(origin: string): Promise<{ note: string; seq: number; cosigned_at: string } | null> {
    return this.core.witnessed(origin);
  }

  /** The epoch the log signs in now (forward-secure key). */
  async epoch(): Promise<number | null> {
    return this.core.epoch();
  }
}
