// The log's logic on a Durable Object's own SQLite storage in workerd (the durable tier), through
// the SQL port the SecurityLog object gives it; tampering is done with raw SQL, as an attacker
// with the database file would.
import { describe, expect, it } from "vitest";
import { GatewayError } from "../../kernel/contracts/errors";
import { canonicalRowBody, GENESIS_PREV_MAC, macMatches, sealRow, type StoredRow } from "../../kernel/chain/chain-mac";
import { SecurityLogCore, type LogLimits } from "./log-core";
import { inScratchStore, scratchStore } from "../../test/helpers/durable-store";
import type { SchemaStore } from "../schema-steps";
import { hexOf } from "../../kernel/crypto/hex";
import { REDACTED, WITHHELD } from "./redact";
import { ROTATED_KIND, SEGMENT_REMOVED_KIND, verifyChain } from "../../kernel/chain/verify-chain";
import { hexToBytes, importMacKey, singleKey } from "../../kernel/chain/epoch-key";
import { CoalescingLog } from "./coalescing-log";
import { ALLOWED_COUNTED_KIND, REFUSALS_COUNTED_KIND } from "./refusal-windows";

const KEY = "0f".repeat(32);
const DAY = 24 * 60 * 60 * 1000;

interface Harness {
  sql: SchemaStore;
  log: SecurityLogCore;
  clock: { ms: number };
}

async function openLog(
  sql: SchemaStore,
  limits: Partial<LogLimits> = {},
  clock = { ms: Date.parse("2025-01-01T00:00:00.000Z") },
): Promise<Harness> {
  const log = await SecurityLogCore.open(sql, KEY, { now: () => clock.ms, limits });
  return { sql, log, clock };
}

function event(i: number) {
  return {
    kind: "internal_route_refused",
    principal: "internal:supervisor",
    outcome: "refused" as const,
    subject: `GET /x/${i}`,
    detail: { i },
  };
}

async function appendN(log: SecurityLogCore, n: number) {
  for (let i = 0; i < n; i++) await log.append(event(i));
}

/** HMAC-SHA256 under KEY by WebCrypto, hex: the mac computed apart from the log's own code. */
async function webCryptoMac(message: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", hexToBytes(KEY), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return hexOf(new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(message))));
}

function rowsOf(sql: SchemaStore) {
  return sql.exec("SELECT * FROM events ORDER BY seq").toArray() as Array<Record<string, unknown>>;
}

describe("appending", () => {
  it(
    "gives gapless seqs from 1 and chains each mac on the previous one from 64 zeros",
    inScratchStore(async (store) => {
      const { log, sql } = await openLog(store);
      const results = await Promise.all([1, 2, 3].map((i) => log.append(event(i))));
      expect(results.map((r) => r.seq)).toEqual([1, 2, 3]);
      const rows = rowsOf(sql);
      expect(rows[0]!.prev_mac).toBe(GENESIS_PREV_MAC);
      expect(rows[1]!.prev_mac).toBe(rows[0]!.mac);
      expect(rows[2]!.prev_mac).toBe(results[1]!.mac);
      expect(log.head()).toEqual({ seq: 3, mac: results[2]!.mac, segment: 1 });
    }),
  );

  it(
    "computes mac = HMAC-SHA256(key, canonical row without mac), prev_mac a member of the row",
    inScratchStore(async (store) => {
      const { log, sql } = await openLog(store);
      const { mac } = await log.append({
        kind: "app_installed",
        principal: "owner",
        outcome: "allowed",
        detail: { b: 2, a: [1] },
      });
      const stored = rowsOf(sql)[0]!;
      expect(stored.detail).toBe('{"a":[1],"b":2}');
      const message = `{"detail":{"a":[1],"b":2},"kind":"app_installed","outcome":"allowed","prev_mac":"${GENESIS_PREV_MAC}","principal":"owner","segment":1,"seq":1,"subject":"","ts":"2025-01-01T00:00:00.000Z"}`;
      expect(mac).toBe(await webCryptoMac(message));
    }),
  );

  it(
    "verifies a log written in the earlier form, HMAC(key, prev_mac ‖ canonical row), and finds its tampered row",
    inScratchStore(async (store) => {
      const { log } = await openLog(store);
      await appendN(log, 4);
      const current = log.query({ limit: 500 }).events.reverse() as StoredRow[];
      const earlier: StoredRow[] = [];
      for (const row of current) {
        const prev_mac = earlier.length ? earlier[earlier.length - 1]!.mac : GENESIS_PREV_MAC;
        const fields = { ...row, prev_mac };
        earlier.push({ ...fields, mac: await webCryptoMac(prev_mac + canonicalRowBody(fields)) });
      }
      const key = singleKey(await importMacKey(hexToBytes(KEY)));
      expect(await verifyChain(key, earlier)).toMatchObject({ ok: true, checked: 4 });
      const tampered = earlier.map((row) => (row.seq === 3 ? { ...row, subject: "GET /elsewhere" } : row));
      expect(await verifyChain(key, tampered)).toMatchObject({ ok: false, first_bad_seq: 3, reason: "mac_mismatch" });
      // The earlier form is taken only after a prev_mac of 64 hex digits: a message of it then
      // opens with a digit, a message of the current form with "{", so neither passes for the other.
      const prev_mac = `{"detail":{},${"x".repeat(40)}`;
      const odd = { ...earlier[1]!, prev_mac };
      const raw = await importMacKey(hexToBytes(KEY));
      expect(macMatches(raw, { ...odd, mac: await webCryptoMac(prev_mac + canonicalRowBody(odd)) })).toBe(false);
      expect(macMatches(raw, earlier[1]!)).toBe(true);
    }),
  );

  it(
    "goes on from a stored log of the earlier form: new rows in the current form, all of it verifies",
    inScratchStore(async (store) => {
      const { log, sql, clock } = await openLog(store);
      await appendN(log, 3);
      let prev_mac = GENESIS_PREV_MAC;
      for (const row of log.query({ limit: 500 }).events.reverse() as StoredRow[]) {
        const mac = await webCryptoMac(prev_mac + canonicalRowBody({ ...row, prev_mac }));
        sql.exec("UPDATE events SET prev_mac = ?, mac = ? WHERE seq = ?", prev_mac, mac, row.seq);
        prev_mac = mac;
      }
      const upgraded = await openLog(sql, {}, clock);
      const { mac } = await upgraded.log.append(event(9));
      const [fourth] = upgraded.log.query({ limit: 1 }).events as StoredRow[];
      expect(fourth!.prev_mac).toBe(prev_mac);
      expect(mac).toBe(await webCryptoMac(canonicalRowBody(fourth!)));
      expect(await upgraded.log.verify(null)).toEqual({ ok: true, checked: 4, segments: 1 });
    }),
  );

  it(
    "cuts a long subject before, never inside, a character of two UTF-16 units: the row verifies as stored",
    inScratchStore(async (store) => {
      const { log, sql } = await openLog(store);
      await log.append({ ...event(1), subject: "x".repeat(499) + "\u{1F642} and more" });
      const stored = rowsOf(sql)[0]!.subject as string;
      expect(stored).toBe(`${"x".repeat(499)}…[+11 chars]`);
      expect(await log.verify(null)).toEqual({ ok: true, checked: 1, segments: 1 });
    }),
  );

  it(
    "keeps counting from the stored head after the object restarts",
    inScratchStore(async (store) => {
      const first = await openLog(store);
      await appendN(first.log, 3);
      const again = await openLog(first.sql, {}, first.clock);
      expect((await again.log.append(event(9))).seq).toBe(4);
      expect(await again.log.verify(null)).toEqual({ ok: true, checked: 4, segments: 1 });
    }),
  );

  it(
    "refuses an invalid event and a kind under 'sel.' that only the log may write",
    inScratchStore(async (store) => {
      const { log } = await openLog(store);
      await expect(log.append({ kind: "Bad Kind", principal: "owner", outcome: "info" })).rejects.toBeInstanceOf(
        GatewayError,
      );
      await expect(log.append({ kind: "x", principal: "root", outcome: "info" })).rejects.toMatchObject({
        code: "sel_event_invalid",
      });
      await expect(
        log.append({ kind: "sel.segment_removed", principal: "gateway", outcome: "info" }),
      ).rejects.toMatchObject({
        code: "sel_event_invalid",
      });
      expect(log.head().seq).toBe(0);
    }),
  );

  it(
    "writes nothing of a batch when one of its events is invalid",
    inScratchStore(async (store) => {
      const { log } = await openLog(store);
      await expect(log.appendMany([event(1), { kind: "x" }])).rejects.toMatchObject({ code: "sel_event_invalid" });
      expect(log.head().seq).toBe(0);
      expect((await log.appendMany([event(1), event(2)])).map((r) => r.seq)).toEqual([1, 2]);
    }),
  );

  it(
    "refuses to open with a key that is not 64 hex characters",
    inScratchStore(async (store) => {
      await expect(SecurityLogCore.open(store, "abc")).rejects.toMatchObject({ code: "sel_key_invalid" });
    }),
  );

  it(
    "stores no credential: keys, shapes and the caller's raw values are masked, the values never stored",
    inScratchStore(async (store) => {
      const { log, sql } = await openLog(store);
      const raw = "rawcookievalue-123";
      await log.append({
        kind: "session_signed_in",
        principal: "owner",
        outcome: "allowed",
        subject: `cookie pc_token_10000=${raw}`,
        detail: {
          headers: { cookie: raw, authorization: "Bearer x.y" },
          url: `/?token=${raw}`,
          note: "Bearer abcdefgh",
        },
        secrets: [raw],
      });
      const text = JSON.stringify(rowsOf(sql));
      expect(text).not.toContain(raw);
      expect(text).not.toContain("abcdefgh");
      const [row] = log.query({}).events;
      expect(row!.subject).toBe(`cookie pc_token_10000=${REDACTED}`);
      expect(row!.detail).toEqual({
        headers: { cookie: REDACTED, authorization: REDACTED },
        url: `/?token=${REDACTED}`,
        note: `Bearer ${REDACTED}`,
      });
    }),
  );

  it(
    "withholds a text whose masker throws",
    inScratchStore(async (store) => {
      const sql = store;
      const log = await SecurityLogCore.open(sql, KEY, {
        maskers: [
          () => {
            throw new Error("boom");
          },
        ],
      });
      await log.append({ kind: "k", principal: "owner", outcome: "info", subject: "secret-ish", detail: { v: "x" } });
      const [row] = log.query({}).events;
      expect(row!.subject).toBe(WITHHELD);
      expect(Object.values(row!.detail)).toEqual([WITHHELD]);
    }),
  );
});

describe("verification", () => {
  it(
    "passes an untouched chain and counts every row",
    inScratchStore(async (store) => {
      const { log } = await openLog(store);
      await appendN(log, 20);
      expect(await log.verify(null)).toEqual({ ok: true, checked: 20, segments: 1 });
      expect(await log.verify(log.head())).toMatchObject({ ok: true });
    }),
  );

  it(
    "passes an empty log, and an anchor on an empty log is truncation from seq 1",
    inScratchStore(async (store) => {
      const { log } = await openLog(store);
      expect(await log.verify(null)).toEqual({ ok: true, checked: 0, segments: 0 });
      expect(await log.verify({ seq: 3, mac: "a".repeat(64) })).toMatchObject({
        ok: false,
        reason: "truncated",
        first_bad_seq: 1,
      });
    }),
  );

  it(
    "finds a row whose detail was edited in storage: mac_mismatch at that seq",
    inScratchStore(async (store) => {
      const { log, sql } = await openLog(store);
      await appendN(log, 10);
      sql.exec("UPDATE events SET detail = ? WHERE seq = 6", '{"i":99}');
      expect(await log.verify(null)).toEqual({
        ok: false,
        checked: 5,
        segments: 1,
        first_bad_seq: 6,
        reason: "mac_mismatch",
      });
    }),
  );

  it(
    "finds an edited outcome even when the detail is not readable JSON",
    inScratchStore(async (store) => {
      const { log, sql } = await openLog(store);
      await appendN(log, 4);
      sql.exec("UPDATE events SET outcome = 'allowed' WHERE seq = 2");
      expect(await log.verify(null)).toMatchObject({ ok: false, first_bad_seq: 2, reason: "mac_mismatch" });
      sql.exec("UPDATE events SET outcome = 'refused', detail = 'not json' WHERE seq = 2");
      expect(await log.verify(null)).toMatchObject({ ok: false, first_bad_seq: 2, reason: "mac_mismatch" });
    }),
  );

  it(
    "finds a deleted row: seq_gap naming the missing seq",
    inScratchStore(async (store) => {
      const { log, sql } = await openLog(store);
      await appendN(log, 10);
      sql.exec("DELETE FROM events WHERE seq = 4");
      expect(await log.verify(null)).toMatchObject({ ok: false, checked: 3, first_bad_seq: 4, reason: "seq_gap" });
    }),
  );

  it(
    "finds two swapped rows: chain_broken at the first of them",
    inScratchStore(async (store) => {
      const { log, sql } = await openLog(store);
      await appendN(log, 10);
      sql.transact(() => {
        sql.exec("UPDATE events SET seq = -1 WHERE seq = 5");
        sql.exec("UPDATE events SET seq = 5 WHERE seq = 6");
        sql.exec("UPDATE events SET seq = 6 WHERE seq = -1");
      });
      expect(await log.verify(null)).toMatchObject({ ok: false, first_bad_seq: 5, reason: "chain_broken" });
    }),
  );

  it("finds an inserted row, whether appended with a forged mac or spliced in with later seqs shifted", async () => {
    await scratchStore().run(async (store) => {
      const forgedAtEnd = await openLog(store);
      await appendN(forgedAtEnd.log, 5);
      const head = forgedAtEnd.log.head();
      forgedAtEnd.sql.exec(
        "INSERT INTO events VALUES (6, '2025-01-01T00:00:00.000Z', 'k', 'owner', 'allowed', '', '{}', 1, ?, ?, 10)",
        head.mac,
        "b".repeat(64),
      );
      expect(await forgedAtEnd.log.verify(null)).toMatchObject({ ok: false, first_bad_seq: 6, reason: "mac_mismatch" });
    });

    await scratchStore().run(async (store) => {
      const spliced = await openLog(store);
      await appendN(spliced.log, 5);
      const prev = spliced.sql.exec<{ mac: string }>("SELECT mac FROM events WHERE seq = 3").toArray()[0]!;
      spliced.sql.transact(() => {
        spliced.sql.exec("UPDATE events SET seq = -seq WHERE seq >= 4");
        spliced.sql.exec("UPDATE events SET seq = 1 - seq WHERE seq <= -4");
        spliced.sql.exec(
          "INSERT INTO events VALUES (4, '2025-01-01T00:00:00.000Z', 'k', 'owner', 'allowed', '', '{}', 1, ?, ?, 10)",
          prev.mac,
          "c".repeat(64),
        );
      });
      expect(spliced.sql.exec("SELECT COUNT(*) AS n FROM events").toArray()[0]).toEqual({ n: 6 });
      expect(await spliced.log.verify(null)).toMatchObject({ ok: false, first_bad_seq: 4, reason: "mac_mismatch" });
    });
  });

  it(
    "finds rows cut off the end behind an anchor: truncated at the first missing seq",
    inScratchStore(async (store) => {
      const { log, sql } = await openLog(store);
      await appendN(log, 10);
      const anchor = log.head();
      sql.exec("DELETE FROM events WHERE seq > 7");
      expect(await log.verify(null)).toMatchObject({ ok: true });
      expect(await log.verify(anchor)).toEqual({
        ok: false,
        checked: 7,
        segments: 1,
        first_bad_seq: 8,
        reason: "truncated",
      });
    }),
  );

  it(
    "finds an anchored row that was rewritten: forked at the anchor's seq",
    inScratchStore(async (store) => {
      const { log } = await openLog(store);
      await appendN(log, 5);
      expect(await log.verify({ seq: 3, mac: "d".repeat(64) })).toMatchObject({
        ok: false,
        first_bad_seq: 3,
        reason: "forked",
      });
    }),
  );

  it(
    "verifies plain arrays too (the verifier is pure)",
    inScratchStore(async (store) => {
      const { log } = await openLog(store);
      await appendN(log, 3);
      const rows = log.query({}).events.reverse() as StoredRow[];
      const key = await importMacKey(hexToBytes(KEY));
      expect(await verifyChain(singleKey(key), rows)).toEqual({ ok: true, checked: 3, segments: 1 });
      expect(await verifyChain(singleKey(key), [rows[0]!, rows[2]!])).toMatchObject({
        ok: false,
        first_bad_seq: 2,
        reason: "seq_gap",
      });
    }),
  );
});

describe("rotation", () => {
  it(
    "seals the live segment when a write takes it past the threshold and opens the next with a sel.rotated row",
    inScratchStore(async (store) => {
      const { log, sql } = await openLog(store, { rotateAtBytes: 2000 });
      await appendN(log, 40);
      const segments = log.segments();
      expect(segments.length).toBeGreaterThan(1);
      const [first, second] = segments;
      expect(first!.sealed_at).not.toBeNull();
      expect(first!.bytes).toBeGreaterThan(2000);
      const opening = sql.exec("SELECT * FROM events WHERE seq = ?", second!.first_seq).toArray()[0] as Record<
        string,
        unknown
      >;
      expect(opening.kind).toBe(ROTATED_KIND);
      expect(opening.segment).toBe(2);
      expect(opening.prev_mac).toBe(first!.last_mac);
      expect(JSON.parse(opening.detail as string)).toMatchObject({
        sealed_segment: 1,
        last_mac: first!.last_mac,
        last_seq: first!.last_seq,
        reason: "size",
      });
      const result = await log.verify(log.head());
      expect(result).toMatchObject({ ok: true, segments: segments.length });
    }),
  );

  it(
    "counts segment bytes as the canonical JSON size of each whole row",
    inScratchStore(async (store) => {
      const { log, sql } = await openLog(store);
      await appendN(log, 3);
      const rows = log.query({}).events;
      const expected = rows.reduce((sum, row) => sum + new TextEncoder().encode(JSON.stringify(row)).length, 0);
      // the stored bytes are the canonical form; JSON.stringify of the same members has the same length
      expect((sql.exec("SELECT SUM(bytes) AS b FROM events").toArray()[0] as { b: number }).b).toBe(expected);
      expect(log.segments()[0]!.bytes).toBe(expected);
    }),
  );

  it(
    "rotates on demand, leaves an empty live segment alone, and the chain verifies end to end",
    inScratchStore(async (store) => {
      const { log } = await openLog(store);
      expect(await log.rotate("on_demand")).toMatchObject({ rotated: false, segment: 1 });
      await appendN(log, 3);
      expect(await log.rotate("owner asked")).toEqual({ rotated: true, sealed_segment: 1, segment: 2, seq: 4 });
      await appendN(log, 2);
      expect(await log.rotate("again")).toMatchObject({ rotated: true, sealed_segment: 2, segment: 3 });
      expect(await log.verify(log.head())).toEqual({ ok: true, checked: 7, segments: 3 });
    }),
  );

  it(
    "finds a segment boundary without a sel.rotated row: segment_link_broken",
    inScratchStore(async (store) => {
      const { log } = await openLog(store);
      await appendN(log, 3);
      await log.rotate("x");
      await appendN(log, 2);
      // Re-sealed with the key (a bug writing a boundary wrongly): the link rule still catches it.
      const rows = log.query({ limit: 500 }).events.reverse() as StoredRow[];
      const key = await importMacKey(hexToBytes(KEY));
      const resealed: StoredRow[] = [];
      for (const row of rows) {
        const prev = resealed.length ? resealed[resealed.length - 1]!.mac : GENESIS_PREV_MAC;
        const fields = {
          ...row,
          kind: row.seq === 4 ? "app_installed" : row.kind,
          prev_mac: row.seq === 1 ? GENESIS_PREV_MAC : prev,
        };
        resealed.push({ ...fields, mac: (await sealRow(key, fields)).mac });
      }
      expect(await verifyChain(singleKey(key), rows)).toMatchObject({ ok: true, segments: 2 });
      expect(await verifyChain(singleKey(key), resealed)).toMatchObject({
        ok: false,
        first_bad_seq: 4,
        reason: "segment_link_broken",
      });
    }),
  );
});

describe("retention", () => {
  it(
    "removes sealed segments older than 365 days, logs each removal, and still verifies",
    inScratchStore(async (store) => {
      const { log, clock } = await openLog(store);
      await appendN(log, 3);
      await log.rotate("r1"); // seals 1 (seq 1-3), opens 2 at seq 4
      await appendN(log, 2);
      await log.rotate("r2"); // seals 2 (seq 4-6), opens 3 at seq 7
      clock.ms += 200 * DAY;
      await appendN(log, 2);
      await log.rotate("r3"); // seals 3 (seq 7-9) at day 200
      const sealedOne = log.segments()[0]!;

      clock.ms += 170 * DAY; // segments 1 and 2 are now 370 days old, segment 3 is 170
      const result = await log.enforceRetention(clock.ms);
      expect(result.removed.map((r) => [r.segment, r.reason])).toEqual([
        [1, "age"],
        [2, "age"],
      ]);
      expect(result.removed[0]).toMatchObject({ first_seq: 1, last_seq: 3, last_mac: sealedOne.last_mac });
      expect(log.segments().map((s) => s.id)).toEqual([3, 4]);

      const removals = log.query({ kind: SEGMENT_REMOVED_KIND }).events;
      expect(removals.map((r) => r.detail.segment)).toEqual([2, 1]);
      expect(await log.verify(null)).toEqual({ ok: true, checked: 6, segments: 2 });
    }),
  );

  it(
    "removes oldest sealed segments until the archive is at most the ceiling",
    inScratchStore(async (store) => {
      const { log } = await openLog(store, { rotateAtBytes: 1500, archiveCeilingBytes: 4000 });
      await appendN(log, 120);
      const sealed = log.segments().filter((s) => s.sealed_at !== null);
      expect(sealed.reduce((sum, s) => sum + s.bytes, 0)).toBeLessThanOrEqual(4000);
      const removals = log.query({ kind: SEGMENT_REMOVED_KIND, limit: 500 }).events;
      expect(removals.length).toBeGreaterThan(0);
      expect(removals.every((r) => r.detail.reason === "size")).toBe(true);
      expect(await log.verify(log.head())).toMatchObject({ ok: true });
    }),
  );

  it(
    "refuses a chain start that no removal row vouches for: segment_link_broken",
    inScratchStore(async (store) => {
      const { log, sql } = await openLog(store);
      await appendN(log, 3);
      await log.rotate("r1");
      await appendN(log, 3);
      // An attacker deletes the whole first segment, rows and bookkeeping, without a removal row.
      sql.exec("DELETE FROM events WHERE segment = 1");
      sql.exec("DELETE FROM segments WHERE id = 1");
      expect(await log.verify(null)).toMatchObject({ ok: false, first_bad_seq: 4, reason: "segment_link_broken" });
    }),
  );

  it(
    "refuses a chain start whose vouching removal row was itself edited",
    inScratchStore(async (store) => {
      const { log, sql, clock } = await openLog(store);
      await appendN(log, 3);
      await log.rotate("r1");
      clock.ms += 400 * DAY;
      await log.enforceRetention(clock.ms);
      expect(await log.verify(null)).toMatchObject({ ok: true });
      sql.exec("UPDATE events SET subject = 'x' WHERE kind = ?", SEGMENT_REMOVED_KIND);
      expect(await log.verify(null)).toMatchObject({ ok: false, reason: "mac_mismatch" });
    }),
  );

  it(
    "accepts an anchor inside a removed segment only when a removal row agrees with it",
    inScratchStore(async (store) => {
      const { log, clock } = await openLog(store);
      await appendN(log, 3);
      const anchor = log.head();
      await log.rotate("r1");
      clock.ms += 400 * DAY;
      await log.enforceRetention(clock.ms);
      expect(await log.verify(anchor)).toMatchObject({ ok: true });
      expect(await log.verify({ seq: 3, mac: "e".repeat(64) })).toMatchObject({
        ok: false,
        reason: "forked",
        first_bad_seq: 3,
      });
    }),
  );
});

describe("query", () => {
  it(
    "answers newest first, filters, and pages with next_before_seq",
    inScratchStore(async (store) => {
      const { log, clock } = await openLog(store);
      for (let i = 0; i < 7; i++) {
        clock.ms += 1000;
        await log.append({
          kind: i % 2 ? "session_signed_in" : "app_installed",
          principal: i < 3 ? "owner" : "app:weather",
          outcome: "allowed",
          detail: { i },
        });
      }
      const page1 = log.query({ limit: 3 });
      expect(page1.events.map((e) => e.seq)).toEqual([7, 6, 5]);
      expect(page1.next_before_seq).toBe(5);
      const page2 = log.query({ limit: 3, before_seq: page1.next_before_seq! });
      expect(page2.events.map((e) => e.seq)).toEqual([4, 3, 2]);
      const page3 = log.query({ limit: 3, before_seq: page2.next_before_seq! });
      expect(page3).toMatchObject({ next_before_seq: null });
      expect(page3.events.map((e) => e.seq)).toEqual([1]);

      expect(log.query({ kind: "session_signed_in" }).events.map((e) => e.seq)).toEqual([6, 4, 2]);
      expect(log.query({ principal: "owner", kind: "app_installed" }).events.map((e) => e.seq)).toEqual([3, 1]);
      expect(log.query({ outcome: "refused" }).events).toEqual([]);
      expect(log.query({ since: "2025-01-01T00:00:05Z" }).events.map((e) => e.seq)).toEqual([7, 6, 5]);
    }),
  );

  it(
    "defaults to 50 rows and refuses a limit above 500",
    inScratchStore(async (store) => {
      const { log } = await openLog(store);
      await log.appendMany(Array.from({ length: 60 }, (_, i) => event(i)));
      expect(log.query({}).events).toHaveLength(50);
      expect(() => log.query({ limit: 501 })).toThrow(GatewayError);
    }),
  );
});

// --- refusals counted, not copied (refusal-windows.ts, coalescing-log.ts) ----------------

describe("refusal windows", () => {
  async function openCounting(sql: SchemaStore, clock = { ms: Date.parse("2025-01-01T00:00:00.000Z") }) {
    const core = await SecurityLogCore.open(sql, KEY, { now: () => clock.ms });
    const log = await CoalescingLog.open(core, sql, { now: () => clock.ms });
    return { sql, core, log, clock };
  }

  const refusal = (i: number, extra: Record<string, unknown> = {}) => ({
    kind: "host_not_allowed",
    principal: "anonymous",
    outcome: "refused" as const,
    subject: `GET /flood/${i}`,
    detail: { host: "evil.example" },
    group: "GET unrouted",
    ...extra,
  });

  /** Refusals each row stands for: 1 for a refusal written as it came, the count for a count row. */
  function refusalsIn(rows: Array<Record<string, unknown>>, kind: string): number {
    let total = 0;
    for (const row of rows) {
      const detail = typeof row.detail === "string" ? JSON.parse(row.detail) : row.detail;
      if (row.kind === kind) total += 1;
      if (row.kind === REFUSALS_COUNTED_KIND && detail.kind === kind) total += detail.count;
    }
    return total;
  }

  it(
    "on a full disk a read answers the rows it has, and the counts it could not write come with a later read",
    inScratchStore(async (store) => {
      const sql = store;
      let full = false;
      // SQLite's answer once the disk is full, to every write, as workerd's storage words it.
      const filling: typeof sql = {
        ...sql,
        exec: (query, ...bindings) => {
          if (full && /^\s*(INSERT|UPDATE|DELETE|REPLACE)/i.test(query))
            throw new Error("SQLITE_FULL: database or disk is full");
          return sql.exec(query, ...bindings);
        },
      };
      const { log } = await openCounting(filling);
      for (let i = 0; i < 3; i++) await log.append(refusal(i));
      full = true;
      const page = await log.query({ limit: 50 });
      expect(page.events.map((e) => e.subject)).toEqual(["GET /flood/0"]);
      full = false;
      const later = await log.query({ limit: 50 });
      expect(later.events[0]).toMatchObject({ kind: REFUSALS_COUNTED_KIND, subject: "2 × host_not_allowed" });
    }),
  );

  it(
    "writes 10 000 identical refusals with unique paths as one row and one count row that add up, and verifies",
    inScratchStore(async (store) => {
      const { log, sql } = await openCounting(store);
      for (let i = 0; i < 10_000; i++) await log.append(refusal(i));
      const page = await log.query({ limit: 500 });
      expect(page.events).toHaveLength(2);
      const [count, first] = page.events;
      expect(first).toMatchObject({ kind: "host_not_allowed", subject: "GET /flood/0" });
      expect(count).toMatchObject({
        kind: REFUSALS_COUNTED_KIND,
        principal: "anonymous",
        outcome: "refused",
        subject: "9999 × host_not_allowed",
      });
      expect(count!.detail).toMatchObject({
        kind: "host_not_allowed",
        group: "GET unrouted",
        count: 9999,
        subjects: ["GET /flood/1", "GET /flood/2", "GET /flood/3", "GET /flood/4", "GET /flood/5"],
      });
      expect(refusalsIn(rowsOf(sql), "host_not_allowed")).toBe(10_000);
      expect(await log.verify(null)).toMatchObject({ ok: true, checked: 2 });
    }),
  );

  it(
    "counts an agent's repeated tool calls, but keeps each call whose argument values the owner logs as its own row",
    inScratchStore(async (store) => {
      const { log } = await openCounting(store);
      const call = (i: number, logged: boolean, outcome: "allowed" | "refused") => ({
        kind: "mcp_tool_called",
        principal: "internal:mcp:notes:tools",
        outcome,
        subject: "notes:tools search",
        group: `notes:tools search ${outcome}`,
        detail: { tool: "search", arguments_digest: `d${i}`, ...(logged ? { arguments: `{"q":"query ${i}"}` } : {}) },
      });
      for (let i = 0; i < 4; i++) await log.append(call(i, false, "allowed"));
      for (let i = 0; i < 3; i++) await log.append(call(10 + i, true, "allowed"));
      for (let i = 0; i < 2; i++) await log.append(call(20 + i, true, "refused"));
      const rows = (await log.query({ limit: 50 })).events.reverse();
      const logged = rows.filter((r) => r.kind === "mcp_tool_called" && (r.detail as { arguments?: string }).arguments);
      expect(logged.map((r) => (r.detail as { arguments: string }).arguments)).toEqual([
        '{"q":"query 10"}',
        '{"q":"query 11"}',
        '{"q":"query 12"}',
        '{"q":"query 20"}',
        '{"q":"query 21"}',
      ]);
      // The unlogged repeats: the first its own row, the other three one count, written before the next other row.
      expect(
        rows.filter((r) => r.kind === "mcp_tool_called" && !(r.detail as { arguments?: string }).arguments),
      ).toHaveLength(1);
      expect(rows.find((r) => r.kind === ALLOWED_COUNTED_KIND)).toMatchObject({ subject: "3 × mcp_tool_called" });
      expect(await log.verify(null)).toMatchObject({ ok: true });
    }),
  );

  it(
    "keeps kinds, principals and groups apart, and a refusal without a group is identical only to the same subject",
    inScratchStore(async (store) => {
      const { log } = await openCounting(store);
      await log.append(refusal(1));
      await log.append(refusal(2, { principal: "app:notes" }));
      await log.append(refusal(3, { kind: "origin_not_allowed" }));
      await log.append(refusal(4, { group: "POST /api/apps" }));
      await log.append(refusal(5, { group: undefined }));
      await log.append(refusal(5, { group: undefined }));
      await log.append(refusal(6, { group: undefined }));
      const rows = (await log.query({})).events.reverse();
      expect(rows.map((r) => r.subject)).toEqual([
        "GET /flood/1",
        "GET /flood/2",
        "GET /flood/3",
        "GET /flood/4",
        "GET /flood/5",
        "GET /flood/6",
        "1 × host_not_allowed",
      ]);
    }),
  );

  it(
    "writes pending counts before any other kind of event, so rows stay in time order",
    inScratchStore(async (store) => {
      const { log, clock } = await openCounting(store);
      await log.append(refusal(1));
      clock.ms += 1000;
      await log.append(refusal(2));
      await log.append(refusal(3));
      clock.ms += 1000;
      await log.append({ kind: "session_signed_in", principal: "owner", outcome: "allowed" });
      const rows = (await log.query({})).events.reverse();
      expect(rows.map((r) => r.kind)).toEqual(["host_not_allowed", REFUSALS_COUNTED_KIND, "session_signed_in"]);
      expect(rows[1]!.detail).toMatchObject({
        count: 2,
        first_ts: "2025-01-01T00:00:01.000Z",
        last_ts: "2025-01-01T00:00:01.000Z",
      });
    }),
  );

  it(
    "writes the count when the window ends and doubles the window while the flood goes on: a day of flood is a few dozen rows",
    inScratchStore(async (store) => {
      const { log, clock, sql } = await openCounting(store);
      const start = clock.ms;
      let sent = 0;
      // One refusal a second for 24 hours, with the alarm looked at every ten seconds.
      for (let t = 0; t < DAY; t += 1000) {
        clock.ms = start + t;
        await log.append(refusal(sent++));
        if (t % 10_000 === 0) await log.flushDue();
      }
      clock.ms = start + DAY;
      await log.flushDue();
      const beforeRead = rowsOf(sql).length;
      expect(beforeRead).toBeLessThan(40);
      await log.query({});
      expect(refusalsIn(rowsOf(sql), "host_not_allowed")).toBe(sent);
      const windows = rowsOf(sql)
        .filter((r) => r.kind === REFUSALS_COUNTED_KIND)
        .map((r) => JSON.parse(r.detail as string).window_ms);
      expect(windows.slice(0, 4)).toEqual([300_000, 600_000, 1_200_000, 2_400_000]);
      expect(Math.max(...windows)).toBe(60 * 60_000);
    }),
    120_000,
  );

  it(
    "forgets a window that ended quiet: the next refusal is written as it comes",
    inScratchStore(async (store) => {
      const { log, clock } = await openCounting(store);
      await log.append(refusal(1));
      clock.ms += 5 * 60_000 + 1;
      await log.flushDue();
      await log.append(refusal(2));
      const rows = (await log.query({})).events.reverse();
      expect(rows.map((r) => r.subject)).toEqual(["GET /flood/1", "GET /flood/2"]);
    }),
  );

  it(
    "never loses a count across a stop: the next start writes what the last run counted",
    inScratchStore(async (store) => {
      const sql = store;
      const clock = { ms: Date.parse("2025-01-01T00:00:00.000Z") };
      const first = await openCounting(sql, clock);
      for (let i = 0; i < 50; i++) await first.log.append(refusal(i));
      expect(rowsOf(sql)).toHaveLength(1);
      // The process stops here without any flush; a new object opens the same storage.
      const second = await openCounting(sql, clock);
      expect(refusalsIn(rowsOf(sql), "host_not_allowed")).toBe(50);
      expect(await second.log.verify(null)).toMatchObject({ ok: true, checked: 2 });
    }),
  );

  it(
    "gives one kind and principal at most 8 groups of its own: a caller-chosen part of a group cannot defeat the count",
    inScratchStore(async (store) => {
      const { log, sql } = await openCounting(store);
      for (let i = 0; i < 1000; i++) await log.append(refusal(i, { group: `GET /api/status host=evil-${i}.example` }));
      await log.query({});
      const rows = rowsOf(sql);
      expect(rows.length).toBeLessThanOrEqual(10);
      expect(refusalsIn(rows, "host_not_allowed")).toBe(1000);
      expect(rows.some((r) => JSON.parse(r.detail as string).group === "(too many groups)")).toBe(true);
    }),
  );

  it(
    "keeps a window open across other events and reads: a refusal repeated minutes later is still counted, not copied",
    inScratchStore(async (store) => {
      const { log, clock } = await openCounting(store);
      await log.append(refusal(1, { subject: "GET /api/auth/sessions" }));
      clock.ms += 60_000;
      await log.append({ kind: "app_installed", principal: "owner", outcome: "allowed" });
      await log.query({});
      clock.ms += 60_000;
      await log.append(refusal(2, { subject: "GET /api/auth/sessions" }));
      const rows = (await log.query({})).events.reverse();
      expect(rows.map((r) => r.kind)).toEqual(["host_not_allowed", "app_installed", REFUSALS_COUNTED_KIND]);
    }),
  );

  it(
    "still refuses a caller-forged count row",
    inScratchStore(async (store) => {
      const { log } = await openCounting(store);
      await expect(
        log.append({ kind: REFUSALS_COUNTED_KIND, principal: "anonymous", outcome: "refused", detail: { count: 1e9 } }),
      ).rejects.toThrow(GatewayError);
    }),
  );

  it(
    "masks a credential in a group like any subject",
    inScratchStore(async (store) => {
      const { log, sql } = await openCounting(store);
      await log.append(refusal(1, { group: "GET x AKIAIOSFODNN7EXAMPLE" }));
      await log.append(refusal(2, { group: "GET x AKIAIOSFODNN7EXAMPLE" }));
      await log.query({});
      expect(JSON.stringify(rowsOf(sql))).not.toContain("AKIAIOSFODNN7EXAMPLE");
    }),
  );
});

describe("anchor standing", () => {
  it(
    "extends an anchor the log still holds, and is forked once the anchored seq holds another row",
    inScratchStore(async (store) => {
      const { log } = await openLog(store);
      await appendN(log, 5);
      const anchor = log.head();
      expect(log.anchorStanding(anchor)).toBe("extends");
      await appendN(log, 2);
      expect(log.anchorStanding(anchor)).toBe("extends");
      expect(log.anchorStanding({ seq: 3, mac: "d".repeat(64) })).toBe("forked");
    }),
  );
  it(
    "is truncated when the log ends before the anchored seq",
    inScratchStore(async (store) => {
      const { log } = await openLog(store);
      await appendN(log, 2);
      expect(log.anchorStanding({ seq: 9, mac: "d".repeat(64) })).toBe("truncated");
      expect(log.anchorStanding({ seq: 0, mac: "0".repeat(64) })).toBe("extends");
    }),
  );
});
