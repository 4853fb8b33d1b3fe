// The bench's append measurement on the product's security-log core over in-memory SQLite.
import { describe, expect, it } from "vitest";
import { SecurityLogCore } from "../../durable/security-log/log-core";
import { GatewayError } from "../../kernel/contracts/errors";
import { memorySql } from "../../test/helpers/memory-sql";
import { benchAppend } from "./sel-append";

describe("benchAppend", () => {
  it("appends chained rows to the log, and unchained rows only to a scratch table of the same shape", async () => {
    const sql = memorySql();
    const log = await SecurityLogCore.open(sql, "0f".repeat(32), { now: () => Date.parse("2025-01-01T00:00:00.000Z") });
    expect(await benchAppend(log, sql, 5, true)).toMatchObject({ n: 5, chained: true });
    expect(log.head().seq).toBe(5);
    expect(await benchAppend(log, sql, 5, false)).toMatchObject({ n: 5, chained: false });
    expect(await benchAppend(log, sql, 3, false)).toMatchObject({ n: 3, chained: false });
    expect(log.head().seq).toBe(5);
    const tables = sql.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all();
    // The log's own tables (every schema step of durable/security-log/schema.ts) and the scratch table, nothing else.
    expect(tables.map((t) => (t as { name: string }).name)).toEqual([
      "bench_unchained_scratch",
      "chain_key",
      "events",
      "log_identity",
      "root_state",
      "schema_steps",
      "segments",
      "witness_admitted",
      "witnessed_logs",
    ]);
    const columns = (table: string) =>
      sql.db
        .prepare(`SELECT name FROM pragma_table_info('${table}') ORDER BY cid`)
        .all()
        .map((c) => (c as { name: string }).name);
    expect(columns("bench_unchained_scratch")).toEqual(columns("events"));
    // Kept from call to call, as the log keeps its rows: seqs continue.
    expect(sql.db.prepare("SELECT COUNT(*) AS n, MAX(seq) AS last FROM bench_unchained_scratch").get()).toEqual({
      n: 8,
      last: 8,
    });
    expect(await log.verify(null)).toMatchObject({ ok: true, checked: 5 });
  });

  it("refuses a row count outside 1..100 000 and writes nothing", async () => {
    const sql = memorySql();
    const log = await SecurityLogCore.open(sql, "0f".repeat(32));
    await expect(benchAppend(log, sql, 0, true)).rejects.toThrow(GatewayError);
    await expect(benchAppend(log, sql, 100_001, true)).rejects.toThrow(GatewayError);
    expect(log.head().seq).toBe(0);
  });
});
