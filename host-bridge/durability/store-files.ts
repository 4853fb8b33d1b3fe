// A Durable Object's export written back as the SQLite file workerd opens for it. The file's
// name comes from the archive (an object's id derives from its namespace's fixed key and the
// instance's fixed name, so it is the same in every home); its tables are made with the very
// statements the object made them with, so its own `CREATE TABLE IF NOT EXISTS` at open finds
// them as it left them. Written once, in a folder no gateway runs on, as a rollback-journal
// file (no -wal or -shm beside it).
import Database from "better-sqlite3";
import type { StoreExport, StoredValue } from "../../kernel/contracts/durability";

function sqliteValue(value: StoredValue): string | number | null | Buffer {
  if (value !== null && typeof value === "object") return Buffer.from(value.b64, "base64");
  return value;
}

/** A table or index statement from an export: only what makes one, never anything else. */
function isCreateStatement(sql: string, kind: "TABLE" | "INDEX"): boolean {
  return new RegExp(`^CREATE (UNIQUE )?${kind} `, "i").test(sql.trim()) && !sql.includes(";");
}

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** Writes `exported` into a new SQLite file at `file` in one transaction. */
export function writeStoreFile(file: string, exported: StoreExport): void {
  const db = new Database(file, { fileMustExist: false });
  try {
    db.pragma("journal_mode = DELETE");
    db.transaction(() => {
      for (const table of exported.tables) {
        if (!isCreateStatement(table.sql, "TABLE"))
          throw new Error(`table ${table.name}: not a CREATE TABLE statement`);
        db.exec(table.sql);
        if (table.rows.length === 0) continue;
        const insert = db.prepare(
          `INSERT INTO ${quoted(table.name)} (${table.columns.map(quoted).join(", ")}) VALUES (${table.columns.map(() => "?").join(", ")})`,
        );
        for (const row of table.rows) {
          if (row.length !== table.columns.length)
            throw new Error(`table ${table.name}: a row of ${row.length} values`);
          insert.run(...row.map(sqliteValue));
        }
      }
      for (const index of exported.indexes) {
        if (!isCreateStatement(index.sql, "INDEX"))
          throw new Error(`index ${index.name}: not a CREATE INDEX statement`);
        db.exec(index.sql);
      }
    })();
  } finally {
    db.close();
  }
}
