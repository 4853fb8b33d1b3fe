// The security log read straight from its SQLite file, for verification that trusts neither
// the running gateway nor its keys: `personalclaw security verify --checkpoint` proves with the
// public key alone that the stored rows extend a checkpoint kept elsewhere, and with the seed
// re-derives every epoch's key to recompute every mac. Read-only; works with the gateway
// running or stopped.
import Database from "better-sqlite3";
import type { StoredRow } from "../kernel/chain/chain-mac";

export { securityLogFile } from "./home";

function parseDetail(text: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // a detail that is not an object keeps its text, so its mac fails rather than the walk throwing
  }
  return { "[unreadable detail]": text };
}

/** Every stored row in seq order, and the sel.segment_removed rows (read ahead by the verifier). */
export function readStoredRows(file: string): { rows: StoredRow[]; removals: StoredRow[] } {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const records = db
      .prepare(
        "SELECT seq, ts, kind, principal, outcome, subject, detail, segment, prev_mac, mac FROM events ORDER BY seq",
      )
      .all() as Array<Omit<StoredRow, "detail"> & { detail: string }>;
    const rows = records.map((record) => ({ ...record, detail: parseDetail(record.detail) }) as StoredRow);
    return { rows, removals: rows.filter((row) => row.kind === "sel.segment_removed") };
  } finally {
    db.close();
  }
}
