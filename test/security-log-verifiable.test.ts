// The verifiable security log on real gateways: the seed shown once and sealed to the owner,
// checkpoints signed with Ed25519 inside workerd and checked offline with the public key
// alone, an attacker who holds the home (current key, signing key, anchor) rewriting the
// SQLite file, and a second local gateway as witness.
import { afterAll, describe, expect, it } from "vitest";
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { errorCode, makeHome, removeHome, runCli, startGateway, type RunningGateway } from "./helpers/gateway";
import { sealRow, type StoredRow } from "../kernel/chain/chain-mac";
import { hexToBytes, importMacKey, seedFromVerificationCode } from "../kernel/chain/epoch-key";

const PASSPHRASE = "correct horse battery staple";
const homes: string[] = [];
afterAll(() => {
  for (const home of homes) removeHome(home);
});

function logDatabase(home: string): Database.Database {
  const dir = join(home, "state", "personalclaw-security-log");
  const file = readdirSync(dir).find((name) => name.endsWith(".sqlite") && name !== "metadata.sqlite")!;
  return new Database(join(dir, file));
}

async function append(gw: RunningGateway, kind: string, subject: string) {
  const secret = readFileSync(join(gw.home, ".local_secret"), "utf8").trim();
  const answer = await gw.fetch("/api/internal/sel/append", {
    method: "POST",
    owner: false,
    headers: { "x-internal-secret": secret, "x-personalclaw-work": "bridge", "content-type": "application/json" },
    body: JSON.stringify({ kind, principal: "owner", outcome: "allowed", subject }),
  });
  expect(answer.status).toBe(200);
}

/** The witness's owner admits the log whose checkpoints `publicKey` signs. */
function admit(witness: RunningGateway, publicKey: string): Promise<Response> {
  return witness.fetch("/api/security/witness/admitted", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ public_key: publicKey }),
  });
}

async function started(env: Record<string, string> = {}): Promise<RunningGateway> {
  const gw = await startGateway({ env });
  homes.push(gw.home);
  return gw;
}

/**
 * The attacker of issue 22: holding the home after the fact, they edit row `seq`, re-MAC it and
 * every later row with the log's current key (read from its storage), keep segment links whole,
 * and move the anchor to the new head, so the HMAC chain and the anchor both agree.
 */
async function rewriteWithCurrentKey(home: string, seq: number): Promise<void> {
  const db = logDatabase(home);
  try {
    const { key_hex } = db.prepare("SELECT key_hex FROM chain_key").get() as { key_hex: string };
    const key = await importMacKey(hexToBytes(key_hex));
    const rows = (
      db
        .prepare(
          "SELECT seq, ts, kind, principal, outcome, subject, detail, segment, prev_mac, mac FROM events ORDER BY seq",
        )
        .all() as Array<Record<string, any>>
    ).map((row) => ({ ...row, detail: JSON.parse(row.detail) }) as StoredRow);
    let prev: string | null = null;
    for (const row of rows) {
      if (row.seq < seq) {
        prev = row.mac;
        continue;
      }
      if (row.seq === seq) row.subject = "nothing happened here";
      if (prev !== null) row.prev_mac = prev;
      if (row.kind === "sel.rotated") row.detail.last_mac = row.prev_mac;
      row.mac = (await sealRow(key, row)).mac;
      prev = row.mac;
      db.prepare("UPDATE events SET subject = ?, detail = ?, prev_mac = ?, mac = ? WHERE seq = ?").run(
        row.subject,
        JSON.stringify(row.detail),
        row.prev_mac,
        row.mac,
        row.seq,
      );
    }
    const head = rows[rows.length - 1]!;
    writeFileSync(join(home, "sel_anchor.json"), `${JSON.stringify({ seq: head.seq, mac: head.mac })}\n`, {
      mode: 0o600,
    });
  } finally {
    db.close();
  }
}

function copyHome(home: string): string {
  const copy = makeHome();
  homes.push(copy);
  cpSync(home, copy, { recursive: true });
  return copy;
}

describe("the seed", () => {
  it("is shown once at the first start, sealed to the owner's passphrase, and never kept in the clear", async () => {
    const gw = await started({ PERSONALCLAW_SEL_SEED_PASSPHRASE: PASSPHRASE });
    const code = String(gw.ready.sel_verification_code);
    const seed = seedFromVerificationCode(code)!;
    expect(seed).toMatch(/^[0-9a-f]{64}$/);
    await append(gw, "before_rotation", "x");
    expect(
      (
        await gw.fetch("/api/sel/rotate", {
          method: "POST",
          body: "{}",
          headers: { "content-type": "application/json" },
        })
      ).status,
    ).toBe(200);
    await append(gw, "after_rotation", "y");
    const shown = await runCli(["security", "seed", "--show", "--home", gw.home], {
      PERSONALCLAW_SEL_SEED_PASSPHRASE: PASSPHRASE,
    });
    expect(shown).toMatchObject({ code: 0 });
    expect(shown.stdout.trim()).toBe(code);
    const wrong = await runCli(["security", "seed", "--show", "--home", gw.home], {
      PERSONALCLAW_SEL_SEED_PASSPHRASE: "guess",
    });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain("does not open");
    expect(wrong.stdout).toBe("");
    await gw.stop();
    expect(statSync(join(gw.home, "sel_seed.sealed")).mode & 0o777).toBe(0o600);
    // The seed never left the bridge: no file of the home holds it as hex or bytes.
    const raw = Buffer.from(seed, "hex");
    const walk = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory() ? walk(join(dir, entry.name)) : [join(dir, entry.name)],
      );
    for (const file of walk(gw.home)) {
      const bytes = readFileSync(file);
      expect(bytes.includes(seed), file).toBe(false);
      expect(bytes.includes(raw), file).toBe(false);
    }
    const again = await startGateway({ home: gw.home });
    expect(again.ready.sel_verification_code).toBeUndefined();
    await again.stop();
  });
});

describe("checkpoints", () => {
  it("are signed with Ed25519 inside the pinned workerd and verify offline with only the public key", async () => {
    const gw = await started();
    for (let i = 0; i < 3; i++) await append(gw, "offline_probe", `row ${i}`);
    // A read signs nothing: before the first checkpoint it finds none.
    const none = await gw.fetch("/api/security/checkpoint");
    expect(none.status).toBe(404);
    expect(await errorCode(none)).toBe("sel_no_checkpoint");
    const api = await gw.fetch("/api/security/checkpoint", { method: "POST" });
    expect(api.status).toBe(200);
    const exported = await api.json();
    expect(exported.note).toContain(`\n${exported.seq}\n`);
    expect(await (await gw.fetch("/api/security/checkpoint")).json()).toEqual(exported);
    expect((await gw.fetch("/api/security/checkpoint", { owner: false })).status).toBe(403);
    expect((await gw.fetch("/api/security/checkpoint", { method: "POST", owner: false })).status).toBe(403);

    const out = join(mkdtempSync(join(tmpdir(), "pc-cp-")), "checkpoint.txt");
    const cli = await runCli(["security", "checkpoint", "--out", out, "--home", gw.home]);
    expect(cli.code).toBe(0);
    await gw.stop();

    // Elsewhere: only the note and the public key; the gateway is not running.
    const elsewhere = mkdtempSync(join(tmpdir(), "pc-elsewhere-"));
    copyFileSync(out, join(elsewhere, "cp.txt"));
    copyFileSync(`${out}.pub`, join(elsewhere, "cp.pub"));
    const verified = await runCli([
      "security",
      "verify",
      "--checkpoint",
      join(elsewhere, "cp.txt"),
      "--public-key",
      join(elsewhere, "cp.pub"),
      "--json",
      "--home",
      gw.home,
    ]);
    expect(verified.code).toBe(0);
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true, checkpoint: { standing: "extends" } });

    const note = readFileSync(out, "utf8");
    const at = note.lastIndexOf(" ") + 10;
    writeFileSync(join(elsewhere, "bad.txt"), note.slice(0, at) + (note[at] === "A" ? "B" : "A") + note.slice(at + 1));
    const bad = await runCli([
      "security",
      "verify",
      "--checkpoint",
      join(elsewhere, "bad.txt"),
      "--public-key",
      join(elsewhere, "cp.pub"),
      "--json",
      "--home",
      gw.home,
    ]);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout)).toMatchObject({ ok: false, reason: "checkpoint_signature_invalid" });
  });

  it("a log rewritten with the current key and anchor fails verification against an earlier exported checkpoint", async () => {
    const gw = await started();
    for (let i = 0; i < 4; i++) await append(gw, "app_installed", `app ${i}`);
    const out = join(mkdtempSync(join(tmpdir(), "pc-cp-")), "before.txt");
    expect((await runCli(["security", "checkpoint", "--out", out, "--home", gw.home])).code).toBe(0);
    for (let i = 0; i < 3; i++) await append(gw, "app_removed", `app ${i}`);
    await gw.stop();

    await rewriteWithCurrentKey(gw.home, 3);
    const again = await startGateway({ home: gw.home });
    try {
      // The HMAC chain and the anchor were rewritten together: on their own they are fooled.
      const chain = await runCli(["security", "verify", "--json", "--home", gw.home]);
      expect(JSON.parse(chain.stdout)).toMatchObject({ ok: true });
      const checkpoint = await runCli(["security", "verify", "--checkpoint", out, "--json", "--home", gw.home]);
      expect(checkpoint.code).toBe(1);
      // A root names no single row: the proof says the rows up to the checkpoint's seq are not the ones it signed.
      const signedSeq = Number(readFileSync(out, "utf8").split("\n")[1]);
      expect(JSON.parse(checkpoint.stdout)).toMatchObject({
        ok: false,
        checkpoint: { standing: "forked", seq: signedSeq, first_bad_seq: signedSeq },
      });
    } finally {
      await again.stop();
    }
  });

  it("rows from a past epoch re-MACed with the current key fail verification from the seed", async () => {
    const gw = await started();
    for (let i = 0; i < 3; i++) await append(gw, "app_installed", `app ${i}`);
    expect(
      (
        await gw.fetch("/api/sel/rotate", {
          method: "POST",
          body: "{}",
          headers: { "content-type": "application/json" },
        })
      ).status,
    ).toBe(200);
    for (let i = 0; i < 2; i++) await append(gw, "app_removed", `app ${i}`);
    await gw.stop();
    const code = String(gw.ready.sel_verification_code);

    const pristine = await runCli(["security", "verify", "--seed", code, "--json", "--home", gw.home]);
    expect(pristine.code).toBe(0);
    expect(JSON.parse(pristine.stdout).chain).toMatchObject({ ok: true, segments: 2 });

    const tampered = copyHome(gw.home);
    await rewriteWithCurrentKey(tampered, 2);
    const again = await startGateway({ home: tampered });
    try {
      const held = JSON.parse((await runCli(["security", "verify", "--json", "--home", tampered])).stdout);
      expect(held).toMatchObject({ ok: true });
      expect(held.macs_unchecked).toBeGreaterThanOrEqual(3);
      const fromSeed = await runCli(["security", "verify", "--seed", code, "--json", "--home", tampered]);
      expect(fromSeed.code).toBe(1);
      expect(JSON.parse(fromSeed.stdout).chain).toMatchObject({ ok: false, first_bad_seq: 2, reason: "mac_mismatch" });
    } finally {
      await again.stop();
    }
  });
});

describe("a witness", () => {
  it("round-trips with a second local gateway: it cosigns each new checkpoint and verification names them", async () => {
    const origin = await started();
    const witness = await started();
    await append(origin, "app_installed", "first");
    const url = `http://127.0.0.1:${witness.port}/api/security/witness`;
    // Not yet admitted by the witness's owner: refused, and the refusal is a row on the witness.
    const refused = await runCli(["security", "witness", url, "--json", "--home", origin.home]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr + refused.stdout).toContain("witness_log_not_admitted");
    const key = (await (await origin.fetch("/api/security/checkpoint", { method: "POST" })).json()).public_key;
    expect((await admit(witness, key)).status).toBe(200);
    const configured = await runCli(["security", "witness", url, "--json", "--home", origin.home]);
    expect(configured.code).toBe(0);
    const { seq: firstSeq, witness: name } = JSON.parse(configured.stdout);
    expect(JSON.parse(readFileSync(join(origin.home, "sel_witness.json"), "utf8"))).toMatchObject({
      url,
      witness: name,
    });

    const first = await (await origin.fetch("/api/security/checkpoint", { method: "POST" })).json();
    const held = await (
      await witness.fetch(`/api/security/witness?origin=${encodeURIComponent(first.origin)}`, { owner: false })
    ).json();
    expect(held.witnessed.seq).toBeGreaterThanOrEqual(firstSeq);

    // A new checkpoint reaches the witness by itself while the gateway runs.
    await append(origin, "app_installed", "second");
    const second = await (await origin.fetch("/api/security/checkpoint", { method: "POST" })).json();
    expect(second.seq).toBeGreaterThan(firstSeq);
    const out = join(mkdtempSync(join(tmpdir(), "pc-cp-")), "cp.txt");
    writeFileSync(out, second.note);
    writeFileSync(`${out}.pub`, second.public_key);
    let report: any = null;
    for (let i = 0; i < 40; i++) {
      report = JSON.parse(
        (await runCli(["security", "verify", "--checkpoint", out, "--json", "--home", origin.home])).stdout,
      );
      if (report.witnessed.some((w: { seq: number }) => w.seq === second.seq)) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(report).toMatchObject({ ok: true, checkpoint: { standing: "extends" } });
    expect(report.witnessed.map((w: { seq: number }) => w.seq)).toEqual(expect.arrayContaining([firstSeq, second.seq]));
    expect(report.witnessed.every((w: { witness: string }) => w.witness === name)).toBe(true);

    // The witness refuses to go back: an older checkpoint of the same log is not cosigned.
    const older = await witness.fetch("/api/security/witness", {
      method: "POST",
      owner: false,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ note: first.note, public_key: first.public_key }),
    });
    expect(older.status).toBe(409);
    expect(await errorCode(older)).toBe("witness_rollback");
    expect(existsSync(join(witness.home, "sel_witness.json"))).toBe(false);
    await origin.stop();
    await witness.stop();
  });

  it("admits only logs its owner admitted: 100 made-up logs are refused and counted, and the admitted log is still cosigned", async () => {
    const origin = await started();
    const witness = await started();
    await append(origin, "app_installed", "first");
    const checkpoint = await (await origin.fetch("/api/security/checkpoint", { method: "POST" })).json();
    // Made-up logs, each with its own well-formed key: none was admitted, so none is held.
    for (let i = 0; i < 100; i++) {
      const fake = `made-up.example/log${i}+0000000${i % 10}+${Buffer.from([1, ...new Array(32).fill(i)]).toString("base64")}`;
      const answer = await witness.fetch("/api/security/witness", {
        method: "POST",
        owner: false,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ note: checkpoint.note, public_key: fake }),
      });
      expect(answer.status).toBe(403);
      expect(await errorCode(answer)).toBe("witness_log_not_admitted");
    }
    // An app token or no credential cannot admit a log; the owner can.
    expect(
      (
        await witness.fetch("/api/security/witness/admitted", {
          method: "POST",
          owner: false,
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ public_key: checkpoint.public_key }),
        })
      ).status,
    ).toBe(403);
    const admitted = await admit(witness, checkpoint.public_key);
    expect(await admitted.json()).toMatchObject({ origin: checkpoint.origin, admitted_logs: 1 });
    const cosigned = await witness.fetch("/api/security/witness", {
      method: "POST",
      owner: false,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ note: checkpoint.note, public_key: checkpoint.public_key }),
    });
    expect(cosigned.status).toBe(200);
    // The refusals are rows, counted: far fewer than 100, and their counts add up to 100.
    const rows = (await (await witness.fetch("/api/security/events?limit=500")).json()).events as Array<{
      kind: string;
      detail: { code?: string; count?: number };
    }>;
    const refusals = rows.filter(
      (row) => row.kind === "witness_log_not_admitted" || row.detail.code === "witness_log_not_admitted",
    );
    expect(refusals.length).toBeGreaterThan(0);
    expect(refusals.length).toBeLessThan(10);
    expect(rows.some((row) => row.kind === "witness_log_admitted")).toBe(true);
    await origin.stop();
    await witness.stop();
  });
});
