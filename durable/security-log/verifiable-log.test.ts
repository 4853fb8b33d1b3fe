// The forward-secure key, signed checkpoints and the witness, on a Durable Object's own SQLite
// storage in workerd (the durable tier), through the SQL port the SecurityLog object gives the
// log. Tampering is raw SQL, done the way an attacker holding the database file and the log's
// current key would.
import { describe, expect, it } from "vitest";
import { GatewayError } from "../../kernel/contracts/errors";
import { hexOf } from "../../kernel/crypto/hex";
import { canonicalRowBody, sealRow, type StoredRow } from "../../kernel/chain/chain-mac";
import { SecurityLogCore, type CoreOptions } from "./log-core";
import { inScratchStore, scratchStore } from "../../test/helpers/durable-store";
import type { SchemaStore } from "../schema-steps";
import { verifyChain } from "../../kernel/chain/verify-chain";
import {
  EPOCH_KIND,
  firstEpochKey,
  hexToBytes,
  importMacKey,
  keysFromSeed,
  seedFromVerificationCode,
  stepEpochKey,
  verificationCode,
} from "../../kernel/chain/epoch-key";
import {
  CHECKPOINT_KIND,
  cosign,
  generateSigningKey,
  importSigningKey,
  openCheckpoint,
  signNote,
  splitNote,
  toBase64,
  verifierKey,
  verifyCosignature,
} from "../../kernel/chain/checkpoint";
import { provesCheckpoint } from "../../kernel/chain/extends-checkpoint";

const SEED = "5e".repeat(32);
/** What the bridge hands the log: the key of epoch 0, one step from the seed. */
const K0 = await firstEpochKey(SEED);
const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;

const VERIFIABLE: CoreOptions = { epochs: { everyMs: HOUR }, checkpoints: { everyRows: 5, everyMs: 10 * 60 * 1000 } };

async function openLog(
  sql: SchemaStore,
  options: Partial<CoreOptions> = {},
  clock = { ms: Date.parse("2025-01-01T00:00:00.000Z") },
) {
  const log = await SecurityLogCore.open(sql, K0, { ...VERIFIABLE, now: () => clock.ms, ...options });
  return { sql, log, clock };
}

/** A log in a store of its own, for a test with two logs: `run` does its work inside that store's object. */
async function logInStore() {
  const store = scratchStore();
  const log = await store.run(async (sql) => (await openLog(sql)).log);
  return { run: <T>(body: (log: SecurityLogCore) => T | Promise<T>) => store.run(() => body(log)) };
}

function event(i: number) {
  return { kind: "app_installed", principal: "owner", outcome: "allowed" as const, subject: `app ${i}`, detail: { i } };
}

async function appendN(log: SecurityLogCore, n: number) {
  for (let i = 0; i < n; i++) await log.append(event(i));
}

function storedRows(sql: SchemaStore): StoredRow[] {
  const records = sql
    .exec("SELECT seq, ts, kind, principal, outcome, subject, detail, segment, prev_mac, mac FROM events ORDER BY seq")
    .toArray();
  return records.map((record) => ({ ...record, detail: JSON.parse(String(record.detail)) }) as StoredRow);
}

function storedKey(sql: SchemaStore): { epoch: number; key_hex: string } {
  return sql.exec("SELECT epoch, key_hex FROM chain_key").toArray()[0] as { epoch: number; key_hex: string };
}

/** What an attacker with the file and the current key does: edit a row, re-MAC it and every later row. */
async function rewriteFrom(
  sql: SchemaStore,
  seq: number,
  keyHex: string,
  edit: (row: StoredRow) => void,
): Promise<void> {
  const key = await importMacKey(hexToBytes(keyHex));
  const rows = storedRows(sql);
  let prev = rows.find((row) => row.seq === seq - 1)?.mac;
  for (const row of rows.filter((r) => r.seq >= seq)) {
    if (row.seq === seq) edit(row);
    if (prev !== undefined) row.prev_mac = prev;
    if (row.kind === "sel.rotated") row.detail.last_mac = row.prev_mac; // keeps the segment link whole
    const { mac } = await sealRow(key, row);
    row.mac = mac;
    prev = mac;
    sql.exec(
      "UPDATE events SET detail = ?, subject = ?, prev_mac = ?, mac = ? WHERE seq = ?",
      JSON.stringify(row.detail),
      row.subject,
      row.prev_mac,
      row.mac,
      row.seq,
    );
  }
}

describe("the forward-secure chain key", () => {
  it(
    "steps one way at a rotation: the log keeps the next key, never the seed, and the seed re-derives both",
    inScratchStore(async (store) => {
      const { log, sql } = await openLog(store);
      await appendN(log, 3);
      expect(storedKey(sql)).toEqual({ epoch: 0, key_hex: K0 });
      await log.rotate("on_demand");
      await appendN(log, 2);
      const stepped = storedKey(sql);
      expect(stepped.epoch).toBe(1);
      expect(stepped.key_hex).toBe(hexOf(await stepEpochKey(hexToBytes(K0))));
      expect(JSON.stringify(sql.exec("SELECT * FROM chain_key").toArray())).not.toContain(K0);
      expect(JSON.stringify(sql.exec("SELECT * FROM chain_key").toArray())).not.toContain(SEED);
      const rotated = storedRows(sql).find((row) => row.kind === "sel.rotated")!;
      expect(rotated.detail.epoch).toBe(1);
      expect(await verifyChain(await keysFromSeed(SEED), storedRows(sql))).toMatchObject({
        ok: true,
        checked: storedRows(sql).length,
        segments: 2,
      });
    }),
  );

  it(
    "opens a new epoch with a sel.epoch row at the first row an hour after the last step",
    inScratchStore(async (store) => {
      const { log, sql, clock } = await openLog(store, { checkpoints: { everyRows: 1000, everyMs: 2 * HOUR } });
      await appendN(log, 2);
      clock.ms += HOUR + 1;
      await appendN(log, 1);
      const kinds = storedRows(sql).map((row) => row.kind);
      expect(kinds.filter((kind) => kind === EPOCH_KIND)).toHaveLength(1);
      expect(kinds[kinds.length - 1]).toBe("app_installed");
      expect(kinds[kinds.length - 2]).toBe(EPOCH_KIND);
      expect(storedKey(sql).epoch).toBe(1);
      expect(await verifyChain(await keysFromSeed(SEED), storedRows(sql))).toMatchObject({ ok: true });
    }),
  );

  it(
    "detects a row of a past epoch re-MACed, with every row after it, under the current key",
    inScratchStore(async (store) => {
      const { log, sql } = await openLog(store);
      await appendN(log, 3);
      await log.rotate("on_demand");
      await appendN(log, 2);
      await rewriteFrom(sql, 2, storedKey(sql).key_hex, (row) => (row.subject = "app innocent"));
      // The log holding only its current key sees nothing wrong with the links...
      expect(await log.verify(null)).toMatchObject({ ok: true });
      // ...but the seed's keyring recomputes row 2 with epoch 0's key.
      expect(await verifyChain(await keysFromSeed(SEED), storedRows(sql))).toMatchObject({
        ok: false,
        first_bad_seq: 2,
        reason: "mac_mismatch",
      });
    }),
  );

  it(
    "checks only the links of rows whose epoch key it erased, and says how many",
    inScratchStore(async (store) => {
      const { log } = await openLog(store);
      await appendN(log, 3);
      await log.rotate("on_demand");
      await appendN(log, 2);
      // 3 rows of epoch 0 and the 1 checkpoint row after the fifth row... counted, not recomputed.
      const result = await log.verify(null);
      expect(result.ok).toBe(true);
      expect(result.macs_unchecked).toBeGreaterThanOrEqual(3);
      expect(result.macs_unchecked).toBeLessThan(result.checked);
    }),
  );

  it(
    "refuses an epoch that skips ahead (epoch_broken)",
    inScratchStore(async (store) => {
      const { log, sql } = await openLog(store);
      await appendN(log, 2);
      await log.rotate("on_demand");
      await rewriteFrom(sql, 3, storedKey(sql).key_hex, (row) => (row.detail.epoch = 2));
      expect(await verifyChain(await keysFromSeed(SEED), storedRows(sql))).toMatchObject({
        ok: false,
        first_bad_seq: 3,
        reason: "epoch_broken",
      });
    }),
  );

  it(
    "keeps its epoch key and root across a restart of the object",
    inScratchStore(async (store) => {
      const first = await openLog(store);
      await appendN(first.log, 3);
      await first.log.rotate("on_demand");
      const again = await openLog(first.sql, {}, first.clock);
      expect(again.log.epoch()).toBe(1);
      await appendN(again.log, 6);
      const exported = await again.log.checkpoint();
      const opened = await openCheckpoint(exported.note, exported.public_key);
      expect(opened.ok).toBe(true);
      if (opened.ok)
        expect(await provesCheckpoint(storedRows(first.sql), opened.checkpoint)).toMatchObject({ standing: "extends" });
      expect(await verifyChain(await keysFromSeed(SEED), storedRows(first.sql))).toMatchObject({ ok: true });
    }),
  );

  it("writes the seed as a verification code of 16 groups and reads it back", () => {
    const code = verificationCode(SEED);
    expect(code.split("-")).toHaveLength(16);
    expect(seedFromVerificationCode(code)).toBe(SEED);
    expect(seedFromVerificationCode("not a code")).toBeNull();
  });
});

describe("signed checkpoints", () => {
  it(
    "signs one every N rows in the C2SP signed-note format, checked with the public key alone",
    inScratchStore(async (store) => {
      const { log, sql } = await openLog(store);
      await appendN(log, 5);
      const rows = storedRows(sql);
      expect(rows[5]!.kind).toBe(CHECKPOINT_KIND);
      expect(rows[5]!.detail.seq).toBe(5);
      const exported = log.latestCheckpoint()!;
      expect(exported.note).toMatch(
        /^personalclaw\/sel\/[0-9a-f]{16}\n5\n[A-Za-z0-9+/]{43}=\nmac [0-9a-f]{64}\ntime .+\n\n\u2014 personalclaw\/sel\/[0-9a-f]{16} [A-Za-z0-9+/=]+\n$/,
      );
      expect(exported.public_key).toMatch(/^personalclaw\/sel\/[0-9a-f]{16}\+[0-9a-f]{8}\+[A-Za-z0-9+/=]+$/);
      const opened = await openCheckpoint(exported.note, exported.public_key);
      expect(opened).toMatchObject({ ok: true, checkpoint: { seq: 5, mac: rows[4]!.mac } });
    }),
  );

  it(
    "appends made together take seqs in call order, and no row comes between a checkpoint's rows and its own",
    inScratchStore(async (store) => {
      const { log, sql } = await openLog(store);
      // Not awaited one by one: each append after a checkpoint is due must wait for it.
      const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => log.append(event(i))));
      const rows = storedRows(sql);
      const events = rows.filter((row) => row.kind !== CHECKPOINT_KIND);
      expect(events.map((row) => row.subject)).toEqual(Array.from({ length: 12 }, (_, i) => `app ${i}`));
      expect(answers.map((answer) => answer.seq)).toEqual(events.map((row) => row.seq));
      const checkpoints = rows.filter((row) => row.kind === CHECKPOINT_KIND);
      expect(checkpoints.map((row) => [row.seq, row.detail.seq])).toEqual([
        [6, 5],
        [11, 10],
      ]);
      for (const row of checkpoints) {
        const opened = await openCheckpoint(String(row.detail.note), log.latestCheckpoint()!.public_key);
        if (!opened.ok) throw new Error(opened.reason);
        expect(await provesCheckpoint(rows, opened.checkpoint)).toMatchObject({ standing: "extends" });
      }
      expect(await verifyChain(await keysFromSeed(SEED), rows)).toMatchObject({ ok: true, checked: 14 });
    }),
  );

  it(
    "signs one when the interval has passed, at the next row",
    inScratchStore(async (store) => {
      const { log, sql, clock } = await openLog(store);
      await appendN(log, 1);
      clock.ms += 11 * 60 * 1000;
      await appendN(log, 1);
      expect(storedRows(sql).map((row) => row.kind)).toEqual(["app_installed", "app_installed", CHECKPOINT_KIND]);
    }),
  );

  it("refuses a note whose signature or body was changed, or another log's key", async () => {
    const other = await logInStore();
    await other.run((log) => appendN(log, 1));
    const foreign = await other.run((log) => log.checkpoint());
    const exported = await scratchStore().run(async (store) => {
      const { log } = await openLog(store);
      await appendN(log, 2);
      return log.checkpoint();
    });
    expect(await openCheckpoint(exported.note.replace(/\n2\n/, "\n3\n"), exported.public_key)).toMatchObject({
      ok: false,
    });
    const sigAt = exported.note.lastIndexOf(" ") + 5;
    const flipped =
      exported.note.slice(0, sigAt) + (exported.note[sigAt] === "A" ? "B" : "A") + exported.note.slice(sigAt + 1);
    expect(await openCheckpoint(flipped, exported.public_key)).toMatchObject({ ok: false });
    expect(await openCheckpoint(exported.note, foreign.public_key)).toMatchObject({ ok: false });
  });

  it(
    "goes on appending over a damaged stored root, and no checkpoint after it proves",
    inScratchStore(async (store) => {
      const first = await openLog(store);
      await appendN(first.log, 5);
      first.sql.exec("UPDATE root_state SET root = ?", toBase64(new Uint8Array(31)));
      const again = await openLog(first.sql, { limits: { rotateAtBytes: 2000 } }, first.clock);
      // Every append answers (each row's checkpoint or rotation included), and the log rotates by size.
      for (let i = 0; i < 20; i++) await again.log.append(event(i));
      expect(again.log.segments().length).toBeGreaterThan(1);
      const exported = await again.log.checkpoint();
      const opened = await openCheckpoint(exported.note, exported.public_key);
      expect(opened.ok).toBe(true);
      if (opened.ok)
        expect(await provesCheckpoint(storedRows(first.sql), opened.checkpoint)).not.toMatchObject({
          standing: "extends",
        });
    }),
  );

  it(
    "a log rewritten with the current key no longer extends a checkpoint taken before",
    inScratchStore(async (store) => {
      const { log, sql } = await openLog(store);
      await appendN(log, 3);
      const before = await log.checkpoint();
      await appendN(log, 3);
      await rewriteFrom(sql, 2, storedKey(sql).key_hex, (row) => (row.subject = "app innocent"));
      expect(await log.verify(null)).toMatchObject({ ok: true }); // the HMAC chain alone is fooled
      const opened = await openCheckpoint(before.note, before.public_key);
      if (!opened.ok) throw new Error(opened.reason);
      // The root names no single row: the first bad seq is the checkpoint's own.
      expect(await provesCheckpoint(storedRows(sql), opened.checkpoint)).toMatchObject({
        standing: "forked",
        first_bad_seq: opened.checkpoint.seq,
      });
    }),
  );

  it(
    "tells a log cut before the checkpoint (truncated) from one whose later rows do not link (broken)",
    inScratchStore(async (store) => {
      const { log, sql } = await openLog(store);
      await appendN(log, 4);
      const exported = await log.checkpoint();
      await appendN(log, 2);
      const opened = await openCheckpoint(exported.note, exported.public_key);
      if (!opened.ok) throw new Error(opened.reason);
      const rows = storedRows(sql);
      expect(await provesCheckpoint(rows, opened.checkpoint)).toMatchObject({
        standing: "extends",
        checked: rows.length,
      });
      expect(await provesCheckpoint(rows.slice(0, 3), opened.checkpoint)).toMatchObject({ standing: "truncated" });
      const relinked = rows.map((row) => (row.seq === rows.length ? { ...row, prev_mac: "0".repeat(64) } : row));
      expect(await provesCheckpoint(relinked, opened.checkpoint)).toMatchObject({
        standing: "broken",
        first_bad_seq: rows.length,
      });
    }),
  );

  it(
    "still proves a checkpoint after retention removed the oldest segment, and names one it removed",
    inScratchStore(async (store) => {
      const { log, sql, clock } = await openLog(store, { checkpoints: { everyRows: 1000, everyMs: 400 * DAY } });
      await appendN(log, 3);
      const old = await log.checkpoint();
      await log.rotate("r1");
      await appendN(log, 2);
      clock.ms += 370 * DAY;
      await log.rotate("r2");
      await appendN(log, 2);
      const recent = await log.checkpoint();
      await log.enforceRetention(clock.ms);
      const rows = storedRows(sql);
      expect(rows[0]!.kind).toBe("sel.rotated");
      for (const [exported, standing] of [
        [recent, "extends"],
        [old, "removed"],
      ] as const) {
        const opened = await openCheckpoint(exported.note, exported.public_key);
        if (!opened.ok) throw new Error(opened.reason);
        expect((await provesCheckpoint(rows, opened.checkpoint)).standing).toBe(standing);
      }
      expect(
        await verifyChain(await keysFromSeed(SEED), rows, {
          removalRows: rows.filter((row) => row.kind === "sel.segment_removed"),
        }),
      ).toMatchObject({ ok: true });
    }),
  );

  it(
    "leaves: a row's leaf is its mac and canonical body, so every field is covered",
    inScratchStore(async (store) => {
      const { log, sql } = await openLog(store);
      await appendN(log, 2);
      const exported = await log.checkpoint();
      const opened = await openCheckpoint(exported.note, exported.public_key);
      if (!opened.ok) throw new Error(opened.reason);
      const rows = storedRows(sql);
      for (const field of ["ts", "kind", "principal", "subject"] as const) {
        const edited = rows.map((row) => (row.seq === 1 ? { ...row, [field]: `${row[field]}x` } : row));
        expect((await provesCheckpoint(edited, opened.checkpoint)).standing).toBe("forked");
      }
      expect(canonicalRowBody(rows[0]!)).toContain('"seq":1');
    }),
  );

  it(
    "the root kept from each row's MACed bytes is the root of the rows read back, whatever their text",
    inScratchStore(async (store) => {
      // Multi-byte characters, astral ones and lone surrogates: the kept leaves come from the
      // bytes sealRow MACed, the proof (and a restarted log) encode the stored text again.
      const subjects = ["é", "漢字", "🙂 x", "\ud800 lone", "x \udfff", "a\u0000b", "plain"];
      const { log, sql } = await openLog(store, { checkpoints: { everyRows: 1000, everyMs: DAY } });
      for (const [i, subject] of subjects.entries()) await log.append({ ...event(i), subject, detail: { subject } });
      const kept = await log.checkpoint();
      const opened = await openCheckpoint(kept.note, kept.public_key);
      if (!opened.ok) throw new Error(opened.reason);
      expect(await provesCheckpoint(storedRows(sql), opened.checkpoint)).toMatchObject({ standing: "extends" });
      // The root's bytes, spelled out: SHA-256(label ‖ the genesis root ‖ "<mac> <body>\n" of each row).
      const covered = storedRows(sql).filter((row) => row.seq <= opened.checkpoint.seq);
      const text = covered.map((row) => `${row.mac} ${canonicalRowBody(row)}\n`).join("");
      const encoded = new TextEncoder().encode(`personalclaw security log root v1\n`);
      const input = new Uint8Array([...encoded, ...new Uint8Array(32), ...new TextEncoder().encode(text)]);
      const root = toBase64(new Uint8Array(await crypto.subtle.digest("SHA-256", input)));
      expect(opened.checkpoint.root).toBe(root);
      // A restart rebuilds the pending leaves from the stored rows; its next checkpoint proves too.
      for (const [i, subject] of subjects.entries()) await log.append({ ...event(i), subject: `${subject}!` });
      const reopened = (await openLog(sql, { checkpoints: { everyRows: 1000, everyMs: DAY } })).log;
      const after = await reopened.checkpoint();
      const openedAfter = await openCheckpoint(after.note, after.public_key);
      if (!openedAfter.ok) throw new Error(openedAfter.reason);
      expect(await provesCheckpoint(storedRows(sql), openedAfter.checkpoint)).toMatchObject({ standing: "extends" });
    }),
  );
});

describe("the witness", () => {
  async function witnessAndLog() {
    const witness = await logInStore();
    const origin = await logInStore();
    await origin.run((log) => appendN(log, 2));
    const { public_key } = await origin.run((log) => log.checkpoint());
    await witness.run((log) => log.admitWitnessLog(public_key));
    return { witness, origin };
  }

  it("cosigns only a log its owner admitted, and admits at most 100", async () => {
    const witness = await logInStore();
    const origin = await logInStore();
    await origin.run((log) => appendN(log, 2));
    const checkpoint = await origin.run((log) => log.checkpoint());
    await witness.run(async (log) => {
      await expect(log.witness(checkpoint.note, checkpoint.public_key)).rejects.toMatchObject({
        code: "witness_log_not_admitted",
      });
      for (let i = 0; i < 100; i++) {
        const pair = await generateSigningKey();
        await log.admitWitnessLog(await verifierKey(`made-up.example/${i}`, pair.publicRaw));
      }
      await expect(log.admitWitnessLog(checkpoint.public_key)).rejects.toMatchObject({ code: "witness_full" });
      await expect(log.witness(checkpoint.note, checkpoint.public_key)).rejects.toMatchObject({
        code: "witness_log_not_admitted",
      });
      await expect(log.admitWitnessLog("not a key")).rejects.toMatchObject({ code: "witness_checkpoint_invalid" });
    });
  });

  it("cosigns a checkpoint with a cosignature its own key verifies, and keeps the newest per log", async () => {
    const { witness, origin } = await witnessAndLog();
    const first = await origin.run((log) => log.checkpoint());
    const answer = await witness.run((log) => log.witness(first.note, first.public_key));
    const body = splitNote(first.note)!.body;
    expect(await verifyCosignature(body, answer.cosignature, answer.witness_key)).toMatchObject({ ok: true });
    expect(await verifyCosignature(body.replace("\n2\n", "\n1\n"), answer.cosignature, answer.witness_key)).toEqual({
      ok: false,
    });
    await origin.run((log) => appendN(log, 1));
    const second = await origin.run((log) => log.checkpoint());
    await witness.run((log) => log.witness(second.note, second.public_key));
    expect(await witness.run((log) => log.witnessed(first.origin))).toMatchObject({
      seq: second.seq,
      note: second.note,
    });
  });

  it("refuses an older checkpoint, another root at the same seq, and another key for the same log", async () => {
    const { witness, origin } = await witnessAndLog();
    const first = await origin.run((log) => log.checkpoint());
    await origin.run((log) => appendN(log, 1));
    const second = await origin.run((log) => log.checkpoint());
    await witness.run(async (log) => {
      await log.witness(second.note, second.public_key);
      await expect(log.witness(first.note, first.public_key)).rejects.toMatchObject({ code: "witness_rollback" });

      const impostor = await generateSigningKey();
      const name = first.origin;
      const key = await importSigningKey(name, impostor.pkcs8, impostor.publicRaw);
      const forged = await signNote(splitNote(second.note)!.body, key);
      // Even a second key the owner admitted for the same origin is not the one the witness holds.
      await log.admitWitnessLog(await verifierKey(name, impostor.publicRaw));
      await expect(log.witness(forged, await verifierKey(name, impostor.publicRaw))).rejects.toMatchObject({
        code: "witness_key_changed",
      });
      await expect(log.witness(second.note.replace("mac ", "mac  "), second.public_key)).rejects.toBeInstanceOf(
        GatewayError,
      );
    });
  });

  it("a cosignature is bound to its witness key and time", async () => {
    const pair = await generateSigningKey();
    const key = await importSigningKey("w", pair.pkcs8, pair.publicRaw);
    const line = await cosign("body\n", key, 1000);
    const vkey = await verifierKey("w", pair.publicRaw, "cosignature");
    expect(await verifyCosignature("body\n", line, vkey)).toEqual({ ok: true, timeSeconds: 1000 });
    expect(await verifyCosignature("body\n", line, await verifierKey("w", pair.publicRaw))).toEqual({ ok: false });
  });
});
