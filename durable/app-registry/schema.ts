// AppRegistry tables: one row per installed app, its backend as the bridge last reported it
// during this gateway start, its own config document, its inbox, and the one transition
// (install, update, enable, ...) under way for it during this start.
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
CREATE TABLE IF NOT EXISTS inbox (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  recipient TEXT NOT NULL,
  sender TEXT NOT NULL,
  body TEXT NOT NULL,
  sent_at TEXT NOT NULL
);
`;
