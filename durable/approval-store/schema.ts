// ApprovalStore tables: every approval with who asked, exactly what would happen, its state
// and the row of its answer; and the grants a scoped yes left behind. Pending approvals are
// rows like any other, so they survive a restart.
import type { SchemaStep } from "../schema-steps";

export const APPROVAL_SCHEMA = `
CREATE TABLE IF NOT EXISTS approvals (
  id TEXT PRIMARY KEY,
  asked_by TEXT NOT NULL,
  app TEXT,
  kind TEXT NOT NULL,
  title TEXT NOT NULL,
  action TEXT NOT NULL,
  scopes TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'denied', 'expired')),
  reason TEXT,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  answered_by TEXT,
  answered_at INTEGER,
  answer_session TEXT,
  answer_scope TEXT,
  grant_id TEXT
);
CREATE INDEX IF NOT EXISTS approvals_pending ON approvals (state, asked_by, created_at);
CREATE TABLE IF NOT EXISTS grants (
  id TEXT PRIMARY KEY,
  asked_by TEXT NOT NULL,
  app TEXT,
  kind TEXT NOT NULL,
  scope TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER,
  approval_id TEXT NOT NULL,
  session TEXT,
  revoked_at INTEGER
);
CREATE INDEX IF NOT EXISTS grants_match ON grants (asked_by, kind);
`;

/** ApprovalStore's schema steps (durable/schema-steps.ts): a released step is never edited, a change is a new step. */
export const APPROVAL_SCHEMA_STEPS: readonly SchemaStep[] = [
  { step: 1, does: "approvals and the grants scoped answers leave", apply: [APPROVAL_SCHEMA] },
];
