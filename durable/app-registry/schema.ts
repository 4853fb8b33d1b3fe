// AppRegistry tables: one row per installed app, its backend as the bridge last reported it
// during this gateway start, its own config document, its inbox, and the one transition
// (install, update, enable, ...) under way for it during this start; its scheduled jobs and
// their last 50 fires; the owner's switch and the start record of each MCP server it registers;
// each server's pinned tool definitions, their policy, changes waiting for the owner, recent calls.
import type { SchemaStep } from "../schema-steps";

export const APP_REGISTRY_SCHEMA = `
CREATE TABLE IF NOT EXISTS apps (
  name TEXT PRIMARY KEY,
  record TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS backends (
  name TEXT PRIMARY KEY,
  status TEXT NOT NULL,
  secret TEXT
);
CREATE TABLE IF NOT EXISTS gateway_start (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  started_at TEXT NOT NULL,
  backends_reported INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS app_config (
  name TEXT PRIMARY KEY,
  config TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS transitions (
  name TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  token TEXT NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS jobs (
  app TEXT NOT NULL,
  name TEXT NOT NULL,
  schedule TEXT NOT NULL,
  zone TEXT NOT NULL,
  route TEXT NOT NULL,
  timeout_s INTEGER NOT NULL,
  next_fire INTEGER,
  PRIMARY KEY (app, name)
);
CREATE TABLE IF NOT EXISTS job_runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  app TEXT NOT NULL,
  job TEXT NOT NULL,
  scheduled_for INTEGER NOT NULL,
  started_at INTEGER NOT NULL,
  status INTEGER,
  duration_ms INTEGER NOT NULL,
  outcome TEXT NOT NULL,
  error TEXT
);
CREATE TABLE IF NOT EXISTS mcp_servers (
  key TEXT PRIMARY KEY,
  app TEXT NOT NULL,
  owner_enabled INTEGER NOT NULL,
  failed_starts INTEGER NOT NULL,
  last_start TEXT,
  starting_id TEXT,
  starting_since INTEGER
);
CREATE TABLE IF NOT EXISTS mcp_tool_servers (
  app TEXT NOT NULL,
  server TEXT NOT NULL,
  consent_digest TEXT NOT NULL,
  pinned_at INTEGER NOT NULL,
  PRIMARY KEY (app, server)
);
CREATE TABLE IF NOT EXISTS mcp_tool_pins (
  app TEXT NOT NULL,
  server TEXT NOT NULL,
  tool TEXT NOT NULL,
  definition TEXT NOT NULL,
  digest TEXT NOT NULL,
  policy TEXT NOT NULL CHECK (policy IN ('allow', 'ask', 'deny')),
  policy_set_by TEXT NOT NULL,
  PRIMARY KEY (app, server, tool)
);
CREATE TABLE IF NOT EXISTS mcp_tool_changes (
  app TEXT NOT NULL,
  server TEXT NOT NULL,
  tool TEXT NOT NULL,
  change TEXT NOT NULL,
  proposed TEXT,
  proposed_digest TEXT NOT NULL,
  approval_id TEXT,
  PRIMARY KEY (app, server, tool)
);
CREATE TABLE IF NOT EXISTS mcp_tool_calls (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  app TEXT NOT NULL,
  server TEXT NOT NULL,
  tool TEXT NOT NULL,
  outcome TEXT NOT NULL,
  arguments_digest TEXT NOT NULL,
  duration_ms INTEGER NOT NULL,
  at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS inbox (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  recipient TEXT NOT NULL,
  sender TEXT NOT NULL,
  body TEXT NOT NULL,
  sent_at TEXT NOT NULL
);
`;

/** AppRegistry's schema steps (durable/schema-steps.ts): a released step is never edited, a change is a new step. */
export const APP_REGISTRY_SCHEMA_STEPS: readonly SchemaStep[] = [
  {
    step: 1,
    does: "apps, backends, the gateway start, app config, transitions, jobs, MCP servers and their tools, inbox",
    apply: [APP_REGISTRY_SCHEMA],
  },
  {
    step: 2,
    does: "the owner's switch to log a tool's argument values, and the values of the recent calls it logged",
    apply: [
      "ALTER TABLE mcp_tool_pins ADD COLUMN log_arguments INTEGER NOT NULL DEFAULT 0",
      "ALTER TABLE mcp_tool_calls ADD COLUMN arguments TEXT",
    ],
  },
];
