// A flood of refused requests against the real gateway: identical refusals are counted in a
// row, not copied one row each, unique paths included, and the chain still verifies.
import { describe, expect, it } from "vitest";
import { gatewayPerSuite, runCli, type RunningGateway } from "./helpers/gateway";

const FLOOD = 10_000;
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

/** Refusals each row stands for: 1 for a refusal row, the count for a count row of that kind. */
function refusalsOf(rows: Array<Record<string, any>>, kind: string): number {
  let total = 0;
  for (const row of rows) {
    if (row.kind === kind) total += 1;
    if (row.kind === "sel.refusals_counted" && row.detail.kind === kind) total += row.detail.count;
  }
  return total;
}

describe("a flood of refused requests", () => {
  const gw = gatewayPerSuite();

  it(`adds fewer than 100 rows for ${FLOOD} refusals with unique paths, the rows count them all, and the log verifies`, async () => {
    const before = await allRows(gw);
    let next = 0;
    let refused = 0;
    const started = Date.now();
    // Loopback only, a bounded loop, 16 requests in flight: a wrong internal credential on a unique path each time.
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < FLOOD) {
          const i = next++;
          const response = await gw.fetch(`/api/flood-${i}/x${i}?n=${i}`, {
            owner: false,
            headers: { "x-internal-secret": `wrong-${i}`, "x-personalclaw-work": "flood" },
          });
          await response.arrayBuffer();
          if (response.status === 403) refused += 1;
        }
      }),
    );
    const seconds = (Date.now() - started) / 1000;
    expect(refused).toBe(FLOOD);
    const after = await allRows(gw);
    const added = after.filter((row) => row.seq > (before[0]?.seq ?? 0));
    console.log(
      `flood: ${FLOOD} refusals in ${seconds.toFixed(1)} s (${Math.round(FLOOD / seconds)}/s) added ${added.length} rows`,
    );
    expect(added.length).toBeLessThan(100);
    expect(refusalsOf(added, "internal_route_refused")).toBe(FLOOD);
    const counted = added.filter((row) => row.kind === "sel.refusals_counted");
    expect(counted.length).toBeGreaterThan(0);
    expect(counted[0]!.detail).toMatchObject({
      kind: "internal_route_refused",
      group: "GET unrouted",
      first_ts: expect.any(String),
      last_ts: expect.any(String),
    });
    // Never a presented credential, even counted.
    expect(JSON.stringify(added)).not.toContain("wrong-1");
    const verify = await runCli(["security", "verify", "--json", "--home", gw.home]);
    expect(verify.code).toBe(0);
    expect(JSON.parse(verify.stdout)).toMatchObject({ ok: true });
  }, 240_000);
});
