// The security event log against a really started gateway: ordering from the worker and
// the bridge, tamper detection in storage, rotation, redaction, owner-only reads and the CLI.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cpSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import {
  errorCode,
  gatewayPerSuite,
  makeHome,
  rawRequest,
  removeHome,
  runCli,
  startGateway,
  type RunningGateway,
} from "./helpers/gateway";

function logDatabase(home: string): Database.Database {
  const dir = join(home, "state", "personalclaw-security-log");
  const file = readdirSync(dir).find((name) => name.endsWith(".sqlite") && name !== "metadata.sqlite")!;
  return new Database(join(dir, file));
}

async function allEvents(gw: RunningGateway): Promise<Array<Record<string, any>>> {
  const body = await (await gw.fetch("/api/security/events?limit=500")).json();
  return body.events;
}

async function internalAppend(gw: RunningGateway, event: Record<string, unknown>) {
  const secret = readFileSync(join(gw.home, ".local_secret"), "utf8").trim();
  return gw.fetch("/api/internal/sel/append", {
    method: "POST",
    owner: false,
    headers: { "x-internal-secret": secret, "x-personalclaw-work": "bridge", "content-type": "application/json" },
    body: JSON.stringify(event),
  });
}

describe("the security log of a running gateway", () => {
  const gw = gatewayPerSuite();

  it("keeps rows from the worker and from the bridge in order with a gapless seq, and verifies", async () => {
    await rawRequest(gw.port, { path: "/api/status", headers: { host: `evil.example:${gw.port}` } });
    const appended = await internalAppend(gw, {
      kind: "bridge_probe",
      principal: "internal:bridge",
      outcome: "info",
      subject: "probe",
    });
    expect(appended.status).toBe(200);
    await rawRequest(gw.port, { path: "/api/status", headers: { host: `other.example:${gw.port}` } });
    const events = (await allEvents(gw)).reverse();
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    const kinds = events.map((e) => e.kind);
    expect(kinds[0]).toBe("gateway_started");
    expect(kinds).toContain("session_signed_in");
    const probe = kinds.indexOf("bridge_probe");
    expect(kinds[probe - 1]).toBe("host_not_allowed");
    expect(kinds[probe + 1]).toBe("host_not_allowed");
    const verify = await (await gw.fetch("/api/security/events/verify")).json();
    expect(verify).toMatchObject({ ok: true, checked: events.length, segments: 1 });
  });

  it("filters by kind, principal and outcome, newest first", async () => {
    const body = await (await gw.fetch("/api/security/events?kind=host_not_allowed&outcome=refused")).json();
    expect(body.events.length).toBeGreaterThanOrEqual(2);
    expect(body.events.every((e: { kind: string }) => e.kind === "host_not_allowed")).toBe(true);
    expect(body.events[0].seq).toBeGreaterThan(body.events[1].seq);
  });

  it("refuses a caller-forged sel.* row", async () => {
    const forged = await internalAppend(gw, {
      kind: "sel.segment_removed",
      principal: "internal:bridge",
      outcome: "info",
    });
    expect(forged.status).toBe(400);
  });

  it("never stores a token, cookie or secret value that a refused request carried", async () => {
    const cookie = "AAAAAAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB";
    const bearer = "CCCCCCCCCCCCCCCC.DDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDD";
    const internal = "e".repeat(64);
    await rawRequest(gw.port, {
      path: "/api/status",
      headers: {
        host: `evil.example:${gw.port}`,
        cookie: `pc_token_${gw.port}=${cookie}`,
        authorization: `Bearer ${bearer}`,
      },
    });
    await gw.fetch("/api/status", {
      owner: false,
      headers: { "x-internal-secret": internal, "x-personalclaw-work": "probe" },
    });
    await gw.fetch(`/api/auth/sessions?token=${bearer}`, { owner: false });
    await gw.fetch("/api/status", { headers: { authorization: `Bearer ${bearer}` } });
    const dump = JSON.stringify(await allEvents(gw));
    expect(dump).toContain("internal_secret_invalid");
    for (const value of [
      cookie,
      bearer,
      internal,
      gw.token,
      readFileSync(join(gw.home, ".local_secret"), "utf8").trim(),
    ]) {
      expect(dump).not.toContain(value);
      expect(dump).not.toContain(value.slice(value.indexOf(".") + 1));
    }
  });

  it("refuses an unauthenticated caller and the internal credential without the listed route", async () => {
    const anonymous = await gw.fetch("/api/security/events", { owner: false });
    expect(anonymous.status).toBe(403);
    expect(await errorCode(anonymous)).toBe("session_required");
    const verify = await gw.fetch("/api/security/events/verify", { owner: false });
    expect(await errorCode(verify)).toBe("session_required");
  });

  it("rotates on demand into a sealed segment and a new chain that still verifies end to end", async () => {
    const rotated = await gw.fetch("/api/sel/rotate", {
      method: "POST",
      body: "{}",
      headers: { "content-type": "application/json" },
    });
    expect(rotated.status).toBe(200);
    await internalAppend(gw, { kind: "after_rotation", principal: "internal:bridge", outcome: "info" });
    const events = await allEvents(gw);
    const marker = events.find((e) => e.kind === "sel.rotated");
    expect(marker).toBeDefined();
    expect(marker!.segment).toBe(2);
    const verify = await (await gw.fetch("/api/security/events/verify")).json();
    expect(verify).toMatchObject({ ok: true, segments: 2, checked: events.length });
  });

  it("answers the CLI: security events --json and security verify exit 0", async () => {
    const events = await runCli(["security", "events", "--kind", "sel.rotated", "--json", "--home", gw.home]);
    expect(events.code).toBe(0);
    expect(JSON.parse(events.stdout).events[0].kind).toBe("sel.rotated");
    const verify = await runCli(["security", "verify", "--json", "--home", gw.home]);
    expect(verify.code).toBe(0);
    expect(JSON.parse(verify.stdout).ok).toBe(true);
  });
});

describe("the security log's key", () => {
  it("a fresh home keeps no key file; a key file from before epochs that cannot be used refuses the start and says why", async () => {
    const { writeFileSync, existsSync } = await import("node:fs");
    const home = makeHome();
    try {
      const first = await startGateway({ home });
      await first.stop();
      const key = join(home, "sel_hmac.key");
      expect(existsSync(key)).toBe(false);
      const second = await startGateway({ home });
      expect(second.ready.sel_verification_code).toBeUndefined();
      expect((await (await second.fetch("/api/security/events/verify")).json()).ok).toBe(true);
      await second.stop();

      writeFileSync(key, Buffer.alloc(10, 1), { mode: 0o600 });
      const truncated = await runCli(["start", "--port", "0", "--home", home, "--json-ready"]);
      expect(truncated.code).toBe(1);
      expect(truncated.stderr).toContain("refusing to start");
      expect(truncated.stderr).toContain("holds 10 bytes, not 32");
      expect(truncated.stdout).toBe("");
    } finally {
      removeHome(home);
    }
  });
});

describe("tampering with the stored log", () => {
  let pristine: string;
  let rows: number;
  const homes: string[] = [];

  beforeAll(async () => {
    const gw = await startGateway();
    pristine = gw.home;
    for (let i = 0; i < 6; i++) {
      await gw.fetch("/api/status", { owner: false });
      await rawRequest(gw.port, { path: "/api/status", headers: { host: `evil${i}.example:${gw.port}` } });
    }
    await gw.stop();
    const db = logDatabase(pristine);
    rows = (db.prepare("SELECT count(*) AS n FROM events").get() as { n: number }).n;
    db.close();
  });
  afterAll(() => {
    for (const home of [pristine, ...homes]) removeHome(home);
  });

  async function verifyAfter(tamper: (db: Database.Database) => void) {
    const home = makeHome();
    homes.push(home);
    cpSync(pristine, home, { recursive: true });
    const db = logDatabase(home);
    tamper(db);
    db.close();
    const gw = await startGateway({ home });
    try {
      const cli = await runCli(["security", "verify", "--json", "--home", home]);
      return { ...JSON.parse(cli.stdout), exit: cli.code };
    } finally {
      await gw.stop();
    }
  }

  it("reports the edited row when a row's detail is changed in storage", async () => {
    const result = await verifyAfter((db) =>
      db.prepare("UPDATE events SET detail = ? WHERE seq = 4").run('{"host":"innocent.example"}'),
    );
    expect(result).toMatchObject({ ok: false, first_bad_seq: 4, exit: 1 });
  });

  it("reports the gap when a row is deleted", async () => {
    const result = await verifyAfter((db) => db.prepare("DELETE FROM events WHERE seq = 5").run());
    expect(result).toMatchObject({ ok: false, first_bad_seq: 5 });
  });

  it("reports the first of two swapped rows", async () => {
    const result = await verifyAfter((db) => {
      db.prepare("UPDATE events SET seq = -1 WHERE seq = 6").run();
      db.prepare("UPDATE events SET seq = 6 WHERE seq = 7").run();
      db.prepare("UPDATE events SET seq = 7 WHERE seq = -1").run();
    });
    expect(result).toMatchObject({ ok: false, first_bad_seq: 6 });
  });

  it("reports an inserted row", async () => {
    const result = await verifyAfter((db) => {
      const last = db.prepare("SELECT * FROM events ORDER BY seq DESC LIMIT 1").get() as Record<string, unknown>;
      db.prepare(
        "INSERT INTO events (seq, ts, kind, principal, outcome, subject, detail, segment, prev_mac, mac, bytes) VALUES (?, ?, 'app_installed', 'owner', 'allowed', 'x', '{}', ?, ?, ?, 10)",
      ).run(Number(last.seq) + 1, last.ts, last.segment, last.mac, "a".repeat(64));
    });
    expect(result).toMatchObject({ ok: false, first_bad_seq: rows + 1 });
  });

  it("reports truncation when the last rows are deleted behind the anchor", async () => {
    const anchor = JSON.parse(readFileSync(join(pristine, "sel_anchor.json"), "utf8"));
    expect(anchor.seq).toBe(rows);
    const result = await verifyAfter((db) => db.prepare("DELETE FROM events WHERE seq > ?").run(rows - 3));
    // The start that verifies writes rows of its own: the anchored seq is either past the end
    // (truncated) or already holds a new row with another mac (forked).
    expect(result.ok).toBe(false);
    expect(["truncated", "forked"]).toContain(result.reason);
    expect(result.first_bad_seq).toBeGreaterThan(rows - 3);
    expect(result.first_bad_seq).toBeLessThanOrEqual(rows);
  });
});
