// AppRegistry tables: one row per installed app, its own config document, and its inbox.
export const APP_REGISTRY_SCHEMA = `
CREATE TABLE IF NOT EXISTS apps (
  name TEXT PRIMARY KEY,
  record TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS app_config (
  name TEXT PRIMARY KEY,
  config TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS inbox (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  recipient TEXT NOT NULL,
  sender TEXT NOT NULL,
  body TEXT NOT NULL,
  sent_at TEXT NOT NULL
);
`;
