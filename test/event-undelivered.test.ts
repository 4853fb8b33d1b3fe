// EVT-05 on a real gateway: a platform event an app's inbox cannot take is a security-log row,
// never only a line on the console, and an app that never drains its inbox is one row and a
// count however many events it misses.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { gatewayPerSuite, repoRoot, type RunningGateway } from "./helpers/gateway";
import { install } from "./helpers/backends";

const APP = "ev-full";
/** The inbox quota in messages (durable/app-registry/limits.ts). */
const INBOX_MESSAGES = 1000;

interface LogRow {
  seq: number;
  kind: string;
  principal: string;
  subject: string;
  detail: Record<string, any>;
}

/** The newest rows of the log, oldest first (a read writes the counts waiting before it answers). */
async function newestRows(gw: RunningGateway): Promise<LogRow[]> {
  const body = (await (await gw.fetch("/api/security/events?limit=500")).json()) as { events: LogRow[] };
  return body.events.sort((a, b) => a.seq - b.seq);
}

async function publishInstalled(gw: RunningGateway, n: number): Promise<void> {
  const response = await gw.fetch("/api/test/events/publish", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ type: "app.installed", data: { app: `other-${n}` } }),
  });
  expect(response.status).toBe(200);
}

/** An app that subscribes its inbox to app.installed and never drains it. */
function subscriberApp(root: string): string {
  const dir = join(root, APP);
  cpSync(join(repoRoot, "apps", "fixtures", "node-notes"), dir, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(dir, "app.json"), "utf8"));
  manifest.name = APP;
  manifest.permissions = { ...manifest.permissions, api: [], eventSubscriptions: ["app.installed"] };
  writeFileSync(join(dir, "app.json"), JSON.stringify(manifest));
  return dir;
}

describe("an event an app's inbox cannot take", () => {
  const gw = gatewayPerSuite();
  const root = mkdtempSync(join(tmpdir(), "pc-ev-full-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("is a security-log row naming the app, the event and why, and a flood of them is one row and a count", async () => {
    await install(gw.home, subscriberApp(root));
    // Its inbox starts empty (its own install may have landed there).
    const redirect = await gw.fetch(`/apps/${APP}/`);
    const appToken = new URL(redirect.headers.get("location")!, gw.base).searchParams.get("app_token")!;
    const drained = await gw.fetch("/api/apps/message", { headers: { authorization: `Bearer ${appToken}` } });
    expect(drained.status).toBe(200);
    for (let n = 0; n < INBOX_MESSAGES; n += 10)
      await Promise.all(Array.from({ length: 10 }, (_, i) => publishInstalled(gw, n + i)));
    // The inbox is at its quota and nothing was refused yet.
    const full = await newestRows(gw);
    expect(full.filter((row) => row.kind === "event_not_delivered")).toEqual([]);
    const fromSeq = full.at(-1)!.seq;

    for (let n = 0; n < 25; n++) await publishInstalled(gw, INBOX_MESSAGES + n);
    const added = (await newestRows(gw)).filter(
      (row) => row.seq > fromSeq && (row.kind === "event_not_delivered" || row.detail.kind === "event_not_delivered"),
    );
    expect(added.map((row) => [row.kind, row.principal, row.subject])).toEqual([
      ["event_not_delivered", `app:${APP}`, "app.installed"],
      ["sel.refusals_counted", `app:${APP}`, "24 × event_not_delivered"],
    ]);
    expect(added[0]!.detail).toEqual({ to: "inbox", reason: `${INBOX_MESSAGES} messages` });
    expect(added[1]!.detail).toMatchObject({ kind: "event_not_delivered", count: 24 });
  }, 180_000);
});
