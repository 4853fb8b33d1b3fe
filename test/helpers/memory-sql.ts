// The security log's SQL port over an in-memory SQLite database (better-sqlite3), for tests that
// run its core in Node (the host bridge's, the bench's). It accepts statements Durable Object
// SQLite refuses (BEGIN, PRAGMA user_version): durable/ code is tested on the real storage in
// workerd (test/helpers/durable-store.ts).
import Database from "better-sqlite3";
import type { SqlBinding, SqlPort } from "../../durable/security-log/log-core";

/** A fresh in-memory database behind the SqlPort the security log's core takes. */
export function memorySql(): SqlPort & { db: Database.Database } {
  const db = new Database(":memory:");
  return {
    db,
    exec<T extends Record<string, unknown>>(query: string, ...bindings: SqlBinding[]) {
      const statement = db.prepare(query);
      if (statement.reader) {
        const rows = statement.all(...bindings) as T[];
        return { toArray: () => rows };
      }
      statement.run(...bindings);
      return { toArray: () => [] as T[] };
    },
    transact: <T>(fn: () => T) => db.transaction(fn)(),
  };
}
