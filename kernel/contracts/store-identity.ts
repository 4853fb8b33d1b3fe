// Each Durable Object's storage names itself: one row, written when the store is created and
// never changed, so the host bridge's state manifest can tell a store that was replaced (a
// fresh or foreign SQLite file) from the one it knew. The table is outside every DO's own
// schema on purpose: it is the same in all of them and holds nothing but the name.

export const STORE_IDENTITY_TABLE = "store_identity";

export const STORE_IDENTITY_SCHEMA = `CREATE TABLE IF NOT EXISTS ${STORE_IDENTITY_TABLE} (id INTEGER PRIMARY KEY CHECK (id = 1), store_id TEXT NOT NULL, created_at TEXT NOT NULL)`;

export const STORE_IDENTITY_CLAIM = `INSERT OR IGNORE INTO ${STORE_IDENTITY_TABLE} (id, store_id, created_at) VALUES (1, ?, ?)`;

export const STORE_IDENTITY_READ = `SELECT store_id FROM ${STORE_IDENTITY_TABLE} WHERE id = 1`;
