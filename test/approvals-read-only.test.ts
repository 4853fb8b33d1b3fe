// Reading approvals changes nothing (issue 33.11), on a real gateway: GET /api/approvals and
// GET /api/approvals/:id show an approval past its ttl as expired without writing it or a
// security-log row; the store's alarm writes it when its ttl passes, and a raise writes what
// passed by its clock (the test build's X-Test-Now).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { gatewayPerSuite, runCli, type RunningGateway } from "./helpers/gateway";

const DIGEST = `sha256:${"cd".repeat(32)}`;
const HOUR_MS = 3600_000;
const ASKER = "tool:read-only";

interface Approval {
  id: string;
  state: string;
  reason: string | null;
}

interface LogRow {
  seq: number;
  kind: string;
  subject: string;
  detail: Record<string, unknown>;
}

/** The internal credential naming ASKER's work, at the test build's clock `now` when given. */
function asAsker(gw: RunningGateway, now?: number): Record<string, string> {
  return {
    "content-type": "application/json",
    "x-internal-secret": readFileSync(join(gw.home, ".local_secret"), "utf8").trim(),
    "x-personalclaw-work": ASKER,
    ...(now === undefined ? {} : { "x-test-now": String(now) }),
  };
}

async function raise(gw: RunningGateway, title: string, opts: { ttlSeconds?: number; now?: number } = {}) {
  const response = await gw.fetch("/api/approvals", {
    method: "POST",
    owner: false,
    headers: asAsker(gw, opts.now),
    body: JSON.stringify({
      kind: "files.delete",
      title,
      action: { route: "POST /files/delete", target: title, arguments_digest: DIGEST },
      ...(opts.ttlSeconds === undefined ? {} : { ttl_seconds: opts.ttlSeconds }),
    }),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { approval: Approval }).approval;
}

/** One approval as the owner reads it now (real time). */
async function ownerReads(gw: RunningGateway, id: string): Promise<Approval> {
  const response = await gw.fetch(`/api/approvals/${id}`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { approval: Approval }).approval;
}

async function logRows(gw: RunningGateway): Promise<LogRow[]> {
  const response = await gw.fetch("/api/security/events?limit=500");
  expect(response.status).toBe(200);
  return ((await response.json()) as { events: LogRow[] }).events;
}

const expiredRowsOf = (rows: LogRow[], id: string) =>
  rows.filter((row) => row.kind === "approval.expired" && row.subject === id);

describe("reading approvals", () => {
  const gw = gatewayPerSuite();

  it("shows an approval past its ttl as expired and writes nothing; the alarm and the next raise write it and its row", async () => {
    const raisedAt = Date.now();
    const short = await raise(gw, "a minute", { ttlSeconds: 60 });
    const day = await raise(gw, "a day");
    const rowsBefore = await logRows(gw);
    const newestBefore = Math.max(...rowsBefore.map((row) => row.seq));

    // A day on by the asker's clock (the owner's sign-in would have ended by then): both read as expired.
    const later = Date.now() + 25 * HOUR_MS;
    const listed = await gw.fetch("/api/approvals", { owner: false, headers: asAsker(gw, later) });
    expect(listed.status).toBe(200);
    const list = (await listed.json()) as { approvals: Approval[]; pending: number };
    expect(list.pending).toBe(0);
    for (const id of [short.id, day.id])
      expect(list.approvals.find((a) => a.id === id)).toMatchObject({ state: "expired", reason: "ttl" });
    const expiredOnly = await gw.fetch("/api/approvals?state=expired", { owner: false, headers: asAsker(gw, later) });
    expect(((await expiredOnly.json()) as { approvals: Approval[] }).approvals.map((a) => a.id).sort()).toEqual(
      [short.id, day.id].sort(),
    );
    const one = await gw.fetch(`/api/approvals/${day.id}`, { owner: false, headers: asAsker(gw, later) });
    expect(((await one.json()) as { approval: Approval }).approval).toMatchObject({ state: "expired", reason: "ttl" });

    // The reads wrote nothing: no row, and at today's clock the day-long one still waits, in the CLI's list too.
    const rowsAfter = await logRows(gw);
    expect(Math.max(...rowsAfter.map((row) => row.seq))).toBe(newestBefore);
    expect(await ownerReads(gw, day.id)).toMatchObject({ state: "pending", reason: null });
    const cli = await runCli(["approvals", "list", "--json", "--home", gw.home]);
    expect(cli.code, cli.stderr).toBe(0);
    const cliList = JSON.parse(cli.stdout) as { approvals: Approval[] };
    expect(cliList.approvals.find((a) => a.id === day.id)?.state).toBe("pending");

    // The store's alarm writes the minute-long one expired, with its row, once its minute has passed.
    let rows: LogRow[] = [];
    const deadline = raisedAt + 120_000;
    while (Date.now() < deadline) {
      rows = await logRows(gw);
      if (expiredRowsOf(rows, short.id).length > 0) break;
      await new Promise((r) => setTimeout(r, 1_000));
    }
    expect(Date.now() - raisedAt).toBeGreaterThanOrEqual(60_000);
    expect(expiredRowsOf(rows, short.id).map((row) => row.detail)).toEqual([
      { reason: "ttl", asked_by: `internal:${ASKER}`, kind: "files.delete" },
    ]);
    expect(await ownerReads(gw, short.id)).toMatchObject({ state: "expired", reason: "ttl" });
    expect(expiredRowsOf(rows, day.id)).toEqual([]);

    // A raise a day on writes the day-long one expired, with its row.
    await raise(gw, "the next day", { now: later });
    expect(expiredRowsOf(await logRows(gw), day.id).map((row) => row.detail.reason)).toEqual(["ttl"]);
    expect(await ownerReads(gw, day.id)).toMatchObject({ state: "expired", reason: "ttl" });
  }, 180_000);
});
