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

/** BridgeLink's schema steps (durable/schema-steps.ts): a released step is never edited, a change is a new step. */
export const BRIDGE_LINK_SCHEMA_STEPS: readonly SchemaStep[] = [
  { step: 1, does: "paired machines and their public keys", apply: [BRIDGE_LINK_SCHEMA] },
];
