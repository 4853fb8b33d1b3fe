// The owner's list never hides an approval that waits, and settled approvals do not pile up
// (issue 34.4), on the real gateway: the internal credential raises for two askers, the test
// build's clock (X-Test-Now) moves a month on.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { gatewayPerSuite, type RunningGateway } from "./helpers/gateway";

const DIGEST = `sha256:${"ab".repeat(32)}`;
const json = { "content-type": "application/json" };
const DAY_MS = 24 * 3600_000;

function raise(gw: RunningGateway, work: string, title: string, now?: number): Promise<Response> {
  const secret = readFileSync(join(gw.home, ".local_secret"), "utf8").trim();
  return gw.fetch("/api/approvals", {
    method: "POST",
    owner: false,
    headers: {
      ...json,
      "x-internal-secret": secret,
      "x-personalclaw-work": work,
      ...(now === undefined ? {} : { "x-test-now": String(now) }),
    },
    body: JSON.stringify({
      kind: "reminders.send",
      title,
      action: { route: "POST /reminders", target: title, arguments_digest: DIGEST },
    }),
  });
}

async function raisedId(response: Response): Promise<string> {
  expect(response.status).toBe(201);
  return ((await response.json()) as { approval: { id: string } }).approval.id;
}

interface Listing {
  approvals: Array<{ id: string; state: string; asked_by: string }>;
  pending: number;
}

async function listing(gw: RunningGateway, query = ""): Promise<Listing> {
  const response = await gw.fetch(`/api/approvals${query}`);
  expect(response.status).toBe(200);
  return (await response.json()) as Listing;
}

describe("the owner's approval list", () => {
  const gw = gatewayPerSuite();
  let waiting: string;

  it("still lists a pending approval after 520 newer ones from another asker, with the pending count exact", async () => {
    waiting = await raisedId(await raise(gw, "quiet-asker", "the one that waits"));
    for (let batch = 0; batch < 520; batch += 8)
      await Promise.all(
        Array.from({ length: 8 }, (_, i) => raise(gw, "busy-asker", `busy ${batch + i}`).then(raisedId)),
      );
    const all = await listing(gw);
    expect(all.approvals.find((a) => a.id === waiting)?.state).toBe("pending");
    // The quiet asker's one and the busy asker's newest 20; the busy asker's other 500 expired by its limit.
    expect(all.pending).toBe(21);
    expect(all.approvals.filter((a) => a.state === "pending")).toHaveLength(21);
    const pendingOnly = await listing(gw, "?state=pending");
    expect(pendingOnly.approvals.map((a) => a.id)).toContain(waiting);
    expect(pendingOnly.pending).toBe(21);
    // Newest first, the pending one that waits the longest last.
    expect(pendingOnly.approvals.at(-1)?.id).toBe(waiting);
    // The 500 pushed out by the busy asker's limit are counted in the log, not 500 rows.
    const rows = async (kind: string) =>
      (
        (await (await gw.fetch(`/api/security/events?kind=${kind}&limit=500`)).json()) as {
          events: Array<{ detail: Record<string, unknown> }>;
        }
      ).events;
    const single = (await rows("approval.expired")).filter((row) => row.detail.reason === "limit");
    const counted = (await rows("sel.refusals_counted")).filter((row) => row.detail.kind === "approval.expired");
    expect(single.length).toBeLessThan(10);
    expect(single.length + counted.reduce((sum, row) => sum + Number(row.detail.count), 0)).toBe(500);
  }, 120_000);

  it("deletes answered and expired approvals 30 days after they ended, and keeps a pending one", async () => {
    const answered = await raisedId(await raise(gw, "quiet-asker", "answered long ago"));
    const denied = await gw.fetch(`/api/approvals/${answered}/deny`, {
      method: "POST",
      headers: json,
      body: "{}",
    });
    expect(denied.status).toBe(200);
    expect((await gw.fetch(`/api/approvals/${answered}`)).status).toBe(200);
    const later = Date.now() + 31 * DAY_MS;
    // A month on: the next raise prunes what ended more than 30 days before it.
    const fresh = await raisedId(await raise(gw, "quiet-asker", "a month later", later));
    // (Read at today's time: the owner's sign-in would have ended a month on.)
    expect((await gw.fetch(`/api/approvals/${answered}`)).status).toBe(404);
    const after = await listing(gw);
    expect(after.approvals.map((a) => a.id)).not.toContain(answered);
    expect(after.approvals.find((a) => a.id === fresh)?.state).toBe("pending");
  });
});
