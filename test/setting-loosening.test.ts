// A setting that widens reach is a loosening by its meaning, whatever it held before: moving a
// LAN gateway onto every interface asks for consent and for the owner's presence, and its
// settings.changed row says it loosened (the one predicate per setting in owner-settings.ts).
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { errorCode, gatewayPerSuite, type RunningGateway } from "./helpers/gateway";

const json = { "content-type": "application/json" };

function patch(gw: RunningGateway, body: unknown, headers: Record<string, string> = {}) {
  return gw.fetch("/api/config/personalclaw", {
    method: "PATCH",
    headers: { ...json, ...headers },
    body: JSON.stringify(body),
  });
}

const bindHostOf = (gw: RunningGateway) =>
  JSON.parse(readFileSync(join(gw.home, "config.json"), "utf8")).gateway.bind_host;

describe("gateway.bind_host widened from a LAN address", () => {
  const gw = gatewayPerSuite();

  it("to 0.0.0.0 and then to :: each ask for consent and presence, and their rows say loosened", async () => {
    expect((await patch(gw, { path: "gateway.bind_host", value: "192.168.1.20", confirm: true })).status).toBe(200);
    for (const wider of ["0.0.0.0", "::"]) {
      const asked = await patch(gw, { path: "gateway.bind_host", value: wider });
      expect(asked.status, wider).toBe(400);
      expect((await asked.json()).error).toMatchObject({
        code: "confirmation_required",
        detail: { field: "gateway.bind_host", consent: "bind_beyond_loopback" },
      });
      const stale = String(Date.now() + 11 * 60_000);
      const absent = await patch(
        gw,
        { path: "gateway.bind_host", value: wider, confirm: true },
        { "x-test-now": stale },
      );
      expect(await errorCode(absent)).toBe("fresh_sign_in_required");
      expect((await patch(gw, { path: "gateway.bind_host", value: wider, confirm: true })).status).toBe(200);
      expect(bindHostOf(gw)).toBe(wider);
    }
    // Back to one LAN address narrows: no question.
    expect((await patch(gw, { path: "gateway.bind_host", value: "192.168.1.20" })).status).toBe(200);
    const rows = (await (await gw.fetch("/api/security/events?kind=settings.changed&limit=50")).json()).events.filter(
      (e: { subject: string }) => e.subject === "gateway.bind_host",
    );
    expect(
      rows.map((e: { detail: { from: string; to: string; loosened: boolean } }) => [
        e.detail.from,
        e.detail.to,
        e.detail.loosened,
      ]),
    ).toEqual([
      ["::", "192.168.1.20", false],
      ["0.0.0.0", "::", true],
      ["192.168.1.20", "0.0.0.0", true],
      ["127.0.0.1", "192.168.1.20", true],
    ]);
  });
});
