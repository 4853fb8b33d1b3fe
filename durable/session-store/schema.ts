// SessionStore tables. Only a hash of each token's secret is stored; the token itself
// exists only in the response that minted it. The tables grow by numbered steps (SESSION_SCHEMA_STEPS).
import { addMissingColumns, type SchemaStep } from "../schema-steps";

export const SESSION_SCHEMA = `
CREATE TABLE IF NOT EXISTS signing_key (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  key_hex TEXT NOT NULL,
  generation INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS sessions (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  app TEXT,
  issuer TEXT NOT NULL,
  secret_hash TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  last_used_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  signed_in_at INTEGER NOT NULL,
  open_until INTEGER,
  bound_address TEXT,
  opened_at INTEGER,
  name TEXT,
  user_agent TEXT,
  secret_sha256 TEXT
);
CREATE TABLE IF NOT EXISTS ended_sessions (
  id TEXT PRIMARY KEY,
  reason TEXT NOT NULL,
  at INTEGER NOT NULL,
  secret_sha256 TEXT
);
`;

/** Columns added after the first release; a store created before them gains them at open. */
export const SESSION_ADDED_COLUMNS: ReadonlyArray<readonly [string, string]> = [
  ["name", "TEXT"],
  ["user_agent", "TEXT"],
  ["secret_sha256", "TEXT"],
];

/**
 * Columns ended_sessions gained after the first release. secret_sha256 is the ended session's
 * sha256 of `id.secret` (not keyed: it must still prove the secret after the signing key is
 * replaced), so only that secret learns why it ended; a row kept without it tells nobody (AUTH-17).
 */
export const ENDED_ADDED_COLUMNS: ReadonlyArray<readonly [string, string]> = [["secret_sha256", "TEXT"]];

/** SessionStore's schema steps (durable/schema-steps.ts): a released step is never edited, a change is a new step. */
export const SESSION_SCHEMA_STEPS: readonly SchemaStep[] = [
  { step: 1, does: "sessions, ended sessions and the signing key", apply: [SESSION_SCHEMA] },
  {
    step: 2,
    does: "sessions gain name, user_agent and secret_sha256, ended sessions secret_sha256, where a store lacks them",
    apply: (sql) => {
      addMissingColumns(sql, "sessions", SESSION_ADDED_COLUMNS);
      addMissingColumns(sql, "ended_sessions", ENDED_ADDED_COLUMNS);
    },
  },
];
