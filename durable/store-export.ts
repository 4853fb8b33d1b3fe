// A Durable Object's whole storage as one value, for a backup (docs/backup-and-restore.md). It
// is read in one synchronous pass over the object's SQLite — no await between the first table
// and the last — so no other request of the object runs in between: the export is one instant
// of the object, never a copy of its live files. workerd's own tables (`_cf_*`) are not the
// object's state and are left out.
import type { StoreExport, StoredValue, TableExport } from "../kernel/contracts/durability";

interface SqlReader {
  exec: (
    query: string,
    ...bindings: unknown[]
  ) => { toArray(): Record<string, unknown>[]; raw(): Iterable<unknown[]>; readonly columnNames: string[] };
}

const OWN_OBJECTS =
  "SELECT type, name, sql FROM sqlite_master WHERE type IN ('table', 'index') AND sql IS NOT NULL AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' ORDER BY rowid";

function storedValue(value: unknown): StoredValue {
  if (value === null || value === undefined) return null;
  if (typeof value === "string" || typeof value === "number") return value;
  if (value instanceof ArrayBuffer || ArrayBuffer.isView(value)) {
    const bytes = value instanceof ArrayBuffer ? new Uint8Array(value) : new Uint8Array(value.buffer);
    let text = "";
    for (const byte of bytes) text += String.fromCharCode(byte);
    return { b64: btoa(text) };
  }
  return String(value);
}

/** Every table and index of the object, with every row; synchronous on purpose (see above). */
export function exportStore(sql: SqlReader): StoreExport {
  const tables: TableExport[] = [];
  const indexes: StoreExport["indexes"] = [];
  for (const row of sql.exec(OWN_OBJECTS).toArray()) {
    const name = String(row.name);
    if (row.type === "index") {
      indexes.push({ name, sql: String(row.sql) });
      continue;
    }
    const cursor = sql.exec(`SELECT * FROM "${name}"`);
    const rows = [...cursor.raw()].map((values) => values.map(storedValue));
    tables.push({ name, sql: String(row.sql), columns: [...cursor.columnNames], rows });
  }
  return { tables, indexes };
}
