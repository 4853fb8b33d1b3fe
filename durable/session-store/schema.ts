// SessionStore tables. Only a hash of each token's secret is stored; the token itself
// exists only in the response that minted it.
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
