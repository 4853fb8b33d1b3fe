// The chain's write position: the head (the last row's seq and mac), the live segment, the key
// rows are MACed with and, when the log signs checkpoints, the leaves since the last one. Every
// row the log writes is made and recorded here, so seqs stay gapless and each mac chains on the
// last; the log's one writer (log-core.ts) decides when.
import { GatewayError } from "../../kernel/contracts/errors";
import type { AppendResult } from "../../kernel/contracts/security-event";
import {
  GENESIS_PREV_MAC,
  isChainKeyHex,
  sealRow,
  type ChainedFields,
  type MacKey,
  type SealedRow,
} from "../../kernel/chain/chain-mac";
import { hexToBytes, importMacKey } from "../../kernel/chain/epoch-key";
import type { CoreOptions, PreparedEvent, SqlPort } from "./log-core";
import { storedChainKey, storeFirstEpoch, type EpochState } from "./log-epochs";
import type { RootState } from "./log-checkpoints";
import { applySchemaSteps } from "../schema-steps";
import { SECURITY_LOG_SCHEMA_STEPS } from "./schema";
import { insertRow } from "./stored-rows";

/** The segment rows are written into now; bytes is its running size. */
export interface LiveSegment {
  id: number;
  startedAt: string;
  firstSeq: number;
  bytes: number;
}

/** Where the chain stands, and the one way a row is added to it. */
export class LogChain {
  /** The forward-secure key's state; null for a log kept with one key. */
  epochState: EpochState | null = null;
  /** The keyless root's state; null for a log that signs no checkpoints. */
  rootState: RootState | null = null;

  private constructor(
    readonly sql: SqlPort,
    public key: MacKey,
    readonly now: () => number,
    public headSeq: number,
    public headMac: string,
    public live: LiveSegment,
  ) {}

  /** Creates the schema if needed, prepares the key once and reads the head; a bad key refuses to open. */
  static open(sql: SqlPort, keyHex: string, options: CoreOptions): LogChain {
    applySchemaSteps(sql, SECURITY_LOG_SCHEMA_STEPS);
    const now = options.now ?? Date.now;
    // With epochs the log's own stored key wins: the binding only seeds a log that has none.
    const stored = options.epochs ? storedChainKey(sql) : undefined;
    if (stored === undefined && !isChainKeyHex(keyHex)) throw new GatewayError("sel_key_invalid");
    const keyBytes = hexToBytes(stored?.key_hex ?? keyHex.toLowerCase());
    const key = importMacKey(keyBytes);

    const head = sql
      .exec<{ seq: number; mac: string }>("SELECT seq, mac FROM events ORDER BY seq DESC LIMIT 1")
      .toArray()[0];
    const headSeq = head?.seq ?? 0;
    const headMac = head?.mac ?? GENESIS_PREV_MAC;
    const chain = new LogChain(sql, key, now, headSeq, headMac, openLiveSegment(sql, now, headSeq));
    if (options.epochs) {
      chain.epochState =
        stored === undefined
          ? storeFirstEpoch(sql, keyBytes, now)
          : { epoch: stored.epoch, bytes: keyBytes, startedMs: Date.parse(stored.started_at) };
    }
    return chain;
  }

  isoNow(): string {
    return new Date(this.now()).toISOString();
  }

  /** The fields of the row after the head, in `segment` (the live one unless a rotation opens the next). */
  nextFields(event: PreparedEvent, segment = this.live.id): ChainedFields {
    return { ...event, seq: this.headSeq + 1, ts: this.isoNow(), segment, prev_mac: this.headMac };
  }

  insertRow(fields: ChainedFields, sealed: SealedRow): void {
    insertRow(this.sql, fields, sealed);
  }

  /** Moves the head onto a written row and adds its leaf (read in the turn that sealed it). */
  advance(fields: ChainedFields, { mac, bytes, macUtf8, bodyUtf8 }: SealedRow): void {
    this.headSeq = fields.seq;
    this.headMac = mac;
    this.live.bytes += bytes;
    this.rootState?.pending.add(macUtf8, bodyUtf8);
  }

  /** Seals the row of `event` with the current key, writes it and moves the head onto it. */
  writeRow(event: PreparedEvent): AppendResult {
    const fields = this.nextFields(event);
    const sealed = sealRow(this.key, fields);
    this.insertRow(fields, sealed);
    this.advance(fields, sealed);
    return { seq: fields.seq, mac: sealed.mac };
  }
}

/** The unsealed segment, or a new one opened after the head when every segment is sealed; with its byte count. */
function openLiveSegment(sql: SqlPort, now: () => number, headSeq: number): LiveSegment {
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
  return { id: live.id, startedAt: live.started_at, firstSeq: live.first_seq, bytes: total?.total ?? 0 };
}
