// The security-log measurement the bench runs: n appends in one loop through the product's own
// core, chained (real rows of a dedicated log) or not (the same redaction, canonicalisation and
// INSERT into a scratch table of the same shape without the HMAC chain) — the difference is what
// the chain costs.
// It lives here, not in the SecurityLog class: the product ships no measurement hooks.
import { canonicalRowBody } from "../../kernel/chain/chain-mac";
import type { SecurityLogCore } from "../../durable/security-log/log-core";
import { UNCHAINED_COLUMNS, unchainedBindings } from "../../durable/security-log/stored-rows";
import { GatewayError } from "../../kernel/contracts/errors";

export const MAX_BENCH_ROWS = 100_000;

/** What one call answers. */
export interface BenchAppendResult {
  n: number;
  chained: boolean;
  elapsed_ms: number;
}

/**
 * Scratch table for unchained appends: the events table's columns with prev_mac and mac left
 * empty. Its rows are kept from call to call, as the log keeps its own, so both sides insert
 * into a table and indexes of the same size.
 */
const SCRATCH_TABLE = "bench_unchained_scratch";
const SCRATCH_SCHEMA = [
  `CREATE TABLE IF NOT EXISTS ${SCRATCH_TABLE} (
  seq INTEGER PRIMARY KEY, ts TEXT NOT NULL, kind TEXT NOT NULL, principal TEXT NOT NULL,
  outcome TEXT NOT NULL, subject TEXT NOT NULL, detail TEXT NOT NULL, segment INTEGER NOT NULL,
  prev_mac TEXT NOT NULL, mac TEXT NOT NULL, bytes INTEGER NOT NULL
)`,
  // The events table's indexes, so the difference measured is the chain's alone.
  `CREATE INDEX IF NOT EXISTS ${SCRATCH_TABLE}_by_kind ON ${SCRATCH_TABLE} (kind, seq)`,
  `CREATE INDEX IF NOT EXISTS ${SCRATCH_TABLE}_by_principal ON ${SCRATCH_TABLE} (principal, seq)`,
  `CREATE INDEX IF NOT EXISTS ${SCRATCH_TABLE}_by_ts ON ${SCRATCH_TABLE} (ts)`,
];

/** The statements the scratch table needs: a Durable Object's storage.sql or the unit test's port. */
export interface ScratchSql {
  exec(query: string, ...bindings: Array<string | number | null>): { toArray(): unknown[] };
}

/** Appends n rows and answers the elapsed ms; chained rows are real `bench_append` rows of `core`. */
export async function benchAppend(
  core: SecurityLogCore,
  sql: ScratchSql,
  n: unknown,
  chained: unknown,
): Promise<BenchAppendResult> {
  if (typeof n !== "number" || !Number.isInteger(n) || n < 1 || n > MAX_BENCH_ROWS) {
    throw new GatewayError("bad_request", { vars: { reason: `n must be an integer from 1 to ${MAX_BENCH_ROWS}` } });
  }
  const isChained = chained === true;
  const prepared = (i: number) =>
    core.prepareWithGroup({
      kind: "bench_append",
      principal: "gateway",
      outcome: "info",
      subject: "bench",
      detail: { i },
    }).event;
  const started = Date.now();
  if (isChained) {
    for (let i = 0; i < n; i++) await core.appendPrepared(prepared(i));
  } else {
    for (const statement of SCRATCH_SCHEMA) sql.exec(statement);
    const [last] = sql.exec(`SELECT COALESCE(MAX(seq), 0) AS seq FROM ${SCRATCH_TABLE}`).toArray() as [{ seq: number }];
    for (let i = 0; i < n; i++) {
      const fields = { ...prepared(i), seq: last.seq + i + 1, ts: new Date().toISOString(), segment: 0, prev_mac: "" };
      // The product's own columns and bindings, with prev_mac and mac left empty.
      sql.exec(
        `INSERT INTO ${SCRATCH_TABLE} (${UNCHAINED_COLUMNS}, prev_mac, mac, bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ...unchainedBindings(fields),
        "",
        "",
        canonicalRowBody(fields).length,
      );
      await Promise.resolve(); // the chained loop awaits once per row too
    }
  }
  return { n, chained: isChained, elapsed_ms: Date.now() - started };
}
