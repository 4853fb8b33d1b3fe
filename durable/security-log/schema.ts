// SecurityLog's SQLite schema. Only this Durable Object writes these tables.
// `events` holds every row of every segment still kept; `bytes` is the row's canonical-JSON
// size (storage bookkeeping, not part of the row or its mac). `segments` has one row per
// segment: the live one has sealed_at NULL; a removed segment's row is deleted with its events.

export const SCHEMA_STATEMENTS: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY,
    ts TEXT NOT NULL,
    kind TEXT NOT NULL,
    principal TEXT NOT NULL,
    outcome TEXT NOT NULL,
    subject TEXT NOT NULL,
    detail TEXT NOT NULL,
    segment INTEGER NOT NULL,
    prev_mac TEXT NOT NULL,
    mac TEXT NOT NULL,
    bytes INTEGER NOT NULL
  )`,
  `CREATE INDEX IF NOT EXISTS events_by_kind ON events (kind, seq)`,
  `CREATE INDEX IF NOT EXISTS events_by_principal ON events (principal, seq)`,
  `CREATE INDEX IF NOT EXISTS events_by_ts ON events (ts)`,
  `CREATE TABLE IF NOT EXISTS segments (
    id INTEGER PRIMARY KEY,
    started_at TEXT NOT NULL,
    sealed_at TEXT,
    first_seq INTEGER NOT NULL,
    last_seq INTEGER,
    last_mac TEXT,
    bytes INTEGER NOT NULL DEFAULT 0
  )`,
];

/** Scratch table for benchAppend(n, false): rows without a chain, dropped when the run ends. */
export const BENCH_SCRATCH_TABLE = "bench_unchained_scratch";
export const BENCH_SCRATCH_CREATE = `CREATE TABLE IF NOT EXISTS ${BENCH_SCRATCH_TABLE} (
  seq INTEGER PRIMARY KEY, ts TEXT NOT NULL, kind TEXT NOT NULL, principal TEXT NOT NULL,
  outcome TEXT NOT NULL, subject TEXT NOT NULL, detail TEXT NOT NULL, segment INTEGER NOT NULL,
  bytes INTEGER NOT NULL
)`;
export const BENCH_SCRATCH_DROP = `DROP TABLE IF EXISTS ${BENCH_SCRATCH_TABLE}`;
