// The events table's rows as the log writes them and reads them back: one column list, one
// INSERT, reads in seq order and the owner's filtered page. The stored detail is the canonical
// JSON the mac covers, so a row read back is the row that was MACed.
import type {
  SecurityEventPage,
  SecurityEventQuerySchema,
  SecurityEventRow,
} from "../../kernel/contracts/security-event";
import { canonicalJson, type JsonObject } from "../../kernel/crypto/canonical-json";
import type { ChainedFields, SealedRow, StoredRow } from "../../kernel/chain/chain-mac";
import { SEGMENT_REMOVED_KIND } from "../../kernel/chain/verify-chain";
import type { SqlBinding, SqlPort } from "./log-core";

const VERIFY_PAGE_ROWS = 1000;

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

/** Inserts one sealed row: its fields, its mac and its byte count. */
export function insertRow(sql: SqlPort, fields: ChainedFields, { mac, bytes }: SealedRow): void {
  sql.exec(
    `INSERT INTO events (${ROW_COLUMNS}, bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ...unchainedBindings(fields),
    fields.prev_mac,
    mac,
    bytes,
  );
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

/** Every stored row after `after` in seq order, paged: what the verifiers and the root walk. */
export function* rowsInSeqOrder(sql: SqlPort, after = 0): Generator<StoredRow> {
  for (;;) {
    const page = sql
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

/** The sel.segment_removed rows, oldest first: what a removed segment left of the chain. */
export function removalRows(sql: SqlPort): StoredRow[] {
  return sql
    .exec<EventRecord>(`SELECT ${ROW_COLUMNS} FROM events WHERE kind = ? ORDER BY seq`, SEGMENT_REMOVED_KIND)
    .toArray()
    .map(toStoredRow);
}

/** The newest row of `kind`; null when there is none. */
export function newestRowOfKind(sql: SqlPort, kind: string): StoredRow | null {
  const record = sql
    .exec<EventRecord>(`SELECT ${ROW_COLUMNS} FROM events WHERE kind = ? ORDER BY seq DESC LIMIT 1`, kind)
    .toArray()[0];
  return record === undefined ? null : toStoredRow(record);
}

/** Rows newest first, filtered; page with next_before_seq. */
export function queryRows(sql: SqlPort, filter: ReturnType<typeof SecurityEventQuerySchema.parse>): SecurityEventPage {
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
  if (filter.subject !== undefined) {
    where.push("subject = ?");
    bindings.push(filter.subject);
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
  const records = sql
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
