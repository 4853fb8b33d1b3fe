// A flood of allowed egress against the real gateway: a real broker lets N connections out,
// each decision goes to the gateway's security log as the bridge sends it (BridgeReporting,
// the internal append route, the SecurityLog Durable Object in workerd), and the log adds a
// bounded number of rows whose counts add up exactly to N; the chain still verifies.
import http from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BridgeReporting } from "../host-bridge/bridge-reporting";
import { callGateway } from "../host-bridge/cli/gateway-client";
import { startBroker, type EgressBroker } from "../host-bridge/egress/broker";
import { parseHostPattern, type HostPattern } from "../kernel/rules/network-grant";
import { gatewayPerSuite, runCli, type RunningGateway } from "./helpers/gateway";

const FLOOD = 2000;
const IN_FLIGHT = 16;

async function allRows(gw: RunningGateway): Promise<Array<Record<string, any>>> {
  const rows: Array<Record<string, any>> = [];
  let before: number | null = null;
  for (;;) {
    const body = await (
      await gw.fetch(`/api/security/events?limit=500${before ? `&before_seq=${before}` : ""}`)
    ).json();
    rows.push(...body.events);
    if (body.next_before_seq === null) return rows;
    before = body.next_before_seq;
  }
}

describe("a flood of allowed egress", () => {
  const gw = gatewayPerSuite();
  let dir: string;
  let upstream: http.Server;
  let port: number;
  let broker: EgressBroker;
  const reported: Array<Promise<void>> = [];
  /** A report that could not be written would be a row lost, not a row counted. */
  const failures: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "pc-egress-flood-"));
    upstream = http.createServer((_req, res) => res.end("ok"));
    await new Promise<void>((r) => upstream.listen(0, "127.0.0.2", r));
    port = (upstream.address() as AddressInfo).port;
    const reporting = new BridgeReporting(
      (method, path, body) => callGateway(gw.home, "bridge", method, path, body),
      (line) => failures.push(line),
    );
    broker = await startBroker({
      app: "chatty",
      grant: [parseHostPattern(`127.0.0.2:${port}`) as HostPattern],
      socketPath: join(dir, "e.sock"),
      onDecision: (decision) => reported.push(reporting.auditEgress(decision)),
    });
  });

  afterAll(async () => {
    await broker?.close();
    upstream?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`adds fewer than 10 rows for ${FLOOD} allowed connections, the rows count them all, and the log verifies`, async () => {
    const before = await allRows(gw);
    let next = 0;
    let answered = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < FLOOD) {
          const i = next++;
          const status = await new Promise<number>((resolve, reject) => {
            const req = http.request(
              { socketPath: broker.socketPath, path: `http://127.0.0.2:${port}/n/${i}`, agent: false },
              (res) => {
                res.resume();
                res.on("end", () => resolve(res.statusCode ?? 0));
              },
            );
            req.on("error", reject);
            req.end();
          });
          if (status === 200) answered += 1;
        }
      }),
    );
    await Promise.all(reported);
    expect(answered).toBe(FLOOD);
    expect(failures).toEqual([]);
    const added = (await allRows(gw)).filter((row) => row.seq > (before[0]?.seq ?? 0));
    const egress = added.filter((row) => row.principal === "app:chatty");
    let total = 0;
    for (const row of egress) {
      if (row.kind === "egress_allowed") total += 1;
      if (row.kind === "sel.allowed_counted" && row.detail.kind === "egress_allowed") total += row.detail.count;
    }
    expect(egress.length).toBeLessThan(10);
    expect(total).toBe(FLOOD);
    expect(egress.find((row) => row.kind === "sel.allowed_counted")).toMatchObject({
      outcome: "allowed",
      detail: { group: `127.0.0.2:${port}` },
    });
    const verify = await runCli(["security", "verify", "--json", "--home", gw.home]);
    expect(verify.code).toBe(0);
    expect(JSON.parse(verify.stdout)).toMatchObject({ ok: true });
  }, 240_000);
});
