// Allowed egress is counted, not copied: a flood of connections through a real broker, each
// decision reported as the bridge reports it (BridgeReporting.auditEgress) into the security
// log's own coalescing (CoalescingLog over SQLite, the Durable Object's code), adds a bounded
// number of rows whose counts add up exactly to the connections made; and the bridge sends a
// burst of decisions without losing one.
import http from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CoalescingLog } from "../../durable/security-log/coalescing-log";
import { SecurityLogCore } from "../../durable/security-log/log-core";
import { ALLOWED_COUNTED_KIND, REFUSALS_COUNTED_KIND } from "../../durable/security-log/refusal-windows";
import { memorySql } from "../../test/helpers/memory-sql";
import { parseHostPattern, type HostPattern } from "../../kernel/rules/network-grant";
import type { SecurityEventRow } from "../../kernel/contracts/security-event";
import { BridgeReporting } from "../bridge-reporting";
import { startBroker, type EgressBroker } from "./broker";

const FLOOD = 1000;
const IN_FLIGHT = 16;

let dir: string;
let upstreams: http.Server[];
let ports: number[];
let broker: EgressBroker;
let log: CoalescingLog;
const reported: Array<Promise<void>> = [];

/** Rows of `kind` plus the counts of the count rows that stand for more of it. */
function eventsOf(rows: SecurityEventRow[], kind: string, countKind: string): number {
  let total = 0;
  for (const row of rows) {
    if (row.kind === kind) total += 1;
    if (row.kind === countKind && row.detail.kind === kind) total += row.detail.count as number;
  }
  return total;
}

async function allRows(): Promise<SecurityEventRow[]> {
  const rows: SecurityEventRow[] = [];
  let before: number | undefined;
  for (;;) {
    const page = await log.query({ limit: 500, ...(before ? { before_seq: before } : {}) });
    rows.push(...page.events);
    if (page.next_before_seq === null) return rows;
    before = page.next_before_seq;
  }
}

/** One absolute-form GET through the broker; answers the status. */
function fetchThrough(port: number, i: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { socketPath: broker.socketPath, path: `http://127.0.0.2:${port}/n/${i}`, headers: { connection: "close" } },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "pc-egress-counted-"));
  upstreams = [];
  ports = [];
  for (let i = 0; i < 2; i += 1) {
    const server = http.createServer((_req, res) => res.end("ok"));
    await new Promise<void>((r) => server.listen(0, "127.0.0.2", r));
    upstreams.push(server);
    ports.push((server.address() as net.AddressInfo).port);
  }
  const sql = memorySql();
  const core = await SecurityLogCore.open(sql, "0f".repeat(32));
  log = await CoalescingLog.open(core, sql);
  // The gateway's internal append route, reduced to what it does with the body: append it.
  const reporting = new BridgeReporting(
    async (_method, _path, body) => ({ status: 200, body: await log.append(body) }),
    (line) => {
      throw new Error(line);
    },
  );
  broker = await startBroker({
    app: "chatty",
    grant: ports.map((port) => parseHostPattern(`127.0.0.2:${port}`) as HostPattern),
    socketPath: path.join(dir, "e.sock"),
    onDecision: (decision) => reported.push(reporting.auditEgress(decision)),
  });
});

afterAll(async () => {
  await broker.close();
  for (const server of upstreams) server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("allowed egress in the security log", () => {
  it(`adds a handful of rows for ${FLOOD} allowed connections to two hosts, whose counts add up exactly, and the log verifies`, async () => {
    let next = 0;
    const ok = new Map<number, number>(ports.map((port) => [port, 0]));
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < FLOOD) {
          const i = next++;
          const port = ports[i % 2]!;
          if ((await fetchThrough(port, i)) === 200) ok.set(port, ok.get(port)! + 1);
        }
      }),
    );
    // A refusal in the middle of the flood is another kind: it is written, and counted on its own.
    await fetchThrough(1, -1);
    for (let i = 0; i < 10; i += 1) await fetchThrough(ports[0]!, FLOOD + i);
    ok.set(ports[0]!, ok.get(ports[0]!)! + 10);
    await Promise.all(reported);

    const rows = await allRows();
    expect(rows.length).toBeLessThanOrEqual(10);
    expect(eventsOf(rows, "egress_allowed", ALLOWED_COUNTED_KIND)).toBe(FLOOD + 10);
    for (const port of ports) {
      const subject = `127.0.0.2:${port}`;
      const forHost = rows.filter(
        (row) => row.subject === subject || (row.kind === ALLOWED_COUNTED_KIND && row.detail.group === subject),
      );
      expect(eventsOf(forHost, "egress_allowed", ALLOWED_COUNTED_KIND), subject).toBe(ok.get(port));
    }
    const counted = rows.filter((row) => row.kind === ALLOWED_COUNTED_KIND);
    expect(counted.length).toBeGreaterThan(0);
    expect(counted[0]).toMatchObject({
      principal: "app:chatty",
      outcome: "allowed",
      detail: { kind: "egress_allowed", first_ts: expect.any(String), last_ts: expect.any(String) },
    });
    expect(eventsOf(rows, "egress_not_declared", REFUSALS_COUNTED_KIND)).toBe(1);
    expect(rows.filter((row) => row.outcome === "refused" && row.kind === REFUSALS_COUNTED_KIND)).toEqual([]);
    expect(await log.verify(null)).toMatchObject({ ok: true });
  }, 60_000);

  it("reports a burst of decisions a few at a time, in order, every one of them", async () => {
    // The gateway reset connections when a flood's rows were all sent at once: rows were lost.
    let inFlight = 0;
    let most = 0;
    const subjects: string[] = [];
    const reporting = new BridgeReporting(
      async (_method, _path, body) => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        await new Promise((r) => setTimeout(r, 1));
        subjects.push((body as { subject: string }).subject);
        inFlight -= 1;
        return { status: 200, body: { seq: 1, mac: "0".repeat(64) } };
      },
      (line) => {
        throw new Error(line);
      },
    );
    const burst = Array.from({ length: 500 }, (_, i) =>
      reporting.auditEgress({ app: "chatty", host: "h", port: i + 1, outcome: "allowed", address: "93.184.216.34" }),
    );
    await Promise.all(burst);
    expect(most).toBeLessThanOrEqual(8);
    expect(subjects).toHaveLength(500);
    expect(subjects.slice(0, 3)).toEqual(["h:1", "h:2", "h:3"]);
  });

  it("still writes every other allowed event as its own row", async () => {
    const before = (await allRows()).length;
    for (let i = 0; i < 5; i += 1)
      await log.append({ kind: "app_installed", principal: "owner", outcome: "allowed", subject: "weather" });
    for (let i = 0; i < 5; i += 1)
      await log.append({ kind: "backend_started", principal: "internal:bridge", outcome: "allowed", group: "x" });
    expect((await allRows()).length - before).toBe(10);
  });
});
