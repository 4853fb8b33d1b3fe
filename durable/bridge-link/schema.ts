// BridgeLink tables. The pairing instance keeps the paired machines (their public keys; the first
// row spends the one-time pairing secret); a machine's instance keeps nothing on disk, its socket
// is the state it holds.
import type { SchemaStep } from "../schema-steps";

export const BRIDGE_LINK_SCHEMA = `
CREATE TABLE IF NOT EXISTS machines (
  machine TEXT PRIMARY KEY,
  public_key TEXT NOT NULL UNIQUE,
  paired_at TEXT NOT NULL,
  paired_by TEXT NOT NULL CHECK (paired_by IN ('pairing_secret'))
);
`;

// Step 2: pairing codes the owner creates (only their hash is kept), and machines paired by one.
const PAIRING_CODES_STEP = [
  `CREATE TABLE machines_next (
  machine TEXT PRIMARY KEY,
  public_key TEXT NOT NULL UNIQUE,
  paired_at TEXT NOT NULL,
  paired_by TEXT NOT NULL CHECK (paired_by IN ('pairing_secret', 'pairing_code'))
)`,
  "INSERT INTO machines_next SELECT machine, public_key, paired_at, paired_by FROM machines",
  "DROP TABLE machines",
  "ALTER TABLE machines_next RENAME TO machines",
  `CREATE TABLE pairing_codes (
  code_hash TEXT PRIMARY KEY,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  used_by TEXT
)`,
];

/** BridgeLink's schema steps (durable/schema-steps.ts): a released step is never edited, a change is a new step. */
export const BRIDGE_LINK_SCHEMA_STEPS: readonly SchemaStep[] = [
  { step: 1, does: "paired machines and their public keys", apply: [BRIDGE_LINK_SCHEMA] },
  { step: 2, does: "pairing codes, and machines paired by one", apply: PAIRING_CODES_STEP },
  // A forgotten machine's row stays, marked: its key never pairs again, and the pairing secret stays spent.
  { step: 3, does: "machines the owner forgot", apply: ["ALTER TABLE machines ADD COLUMN forgotten_at TEXT"] },
];
