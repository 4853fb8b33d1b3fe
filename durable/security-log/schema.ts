// SecurityLog's SQLite schema. Only this Durable Object writes these tables.
// `events` holds every row of every segment still kept; `bytes` is the row's canonical-JSON
// size (storage bookkeeping, not part of the row or its mac). `segments` has one row per
// segment: the live one has sealed_at NULL; a removed segment's row is deleted with its events.
import type { SchemaStep } from "../schema-steps";

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

/** Tables of the forward-secure key, created when the log runs with epochs. */
export const EPOCH_SCHEMA_STATEMENTS: readonly string[] = [
  // The current epoch's MAC key, one row, overwritten at every step (the old key is erased).
  `CREATE TABLE IF NOT EXISTS chain_key (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    epoch INTEGER NOT NULL,
    key_hex TEXT NOT NULL,
    started_at TEXT NOT NULL
  )`,
];

/** Tables of signed checkpoints and of the witness, created when the log signs checkpoints. */
export const CHECKPOINT_SCHEMA_STATEMENTS: readonly string[] = [
  // The log's name and its checkpoint signing key (Ed25519, PKCS#8 base64), made at first open.
  `CREATE TABLE IF NOT EXISTS log_identity (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    log_id TEXT NOT NULL,
    signing_pkcs8 TEXT NOT NULL,
    public_key TEXT NOT NULL
  )`,
  // The keyless root at the last boundary (checkpoint.ts) and when the last checkpoint was signed.
  `CREATE TABLE IF NOT EXISTS root_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    boundary_seq INTEGER NOT NULL,
    root TEXT NOT NULL,
    checkpoint_at TEXT
  )`,
  // As a witness for other logs: the newest checkpoint cosigned per origin, and the key first seen for it.
  `CREATE TABLE IF NOT EXISTS witnessed_logs (
    origin TEXT PRIMARY KEY,
    vkey TEXT NOT NULL,
    seq INTEGER NOT NULL,
    root TEXT NOT NULL,
    note TEXT NOT NULL,
    cosigned_at TEXT NOT NULL
  )`,
  // As a witness: the logs its owner admitted, by verifier key (witness.ts). Only these are cosigned.
  `CREATE TABLE IF NOT EXISTS witness_admitted (
    vkey TEXT PRIMARY KEY,
    origin TEXT NOT NULL,
    admitted_at TEXT NOT NULL
  )`,
];

/**
 * SecurityLog's schema steps (durable/schema-steps.ts): a released step is never edited, a change
 * is a new step. Every store gets all of them; a log opened without epochs or checkpoints leaves
 * their tables empty.
 */
export const SECURITY_LOG_SCHEMA_STEPS: readonly SchemaStep[] = [
  { step: 1, does: "events and segments", apply: SCHEMA_STATEMENTS },
  { step: 2, does: "the forward-secure chain key", apply: EPOCH_SCHEMA_STATEMENTS },
  { step: 3, does: "the log's identity, its root state and the witness's logs", apply: CHECKPOINT_SCHEMA_STATEMENTS },
];
