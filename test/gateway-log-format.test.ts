// The owner's logs settings on a real gateway: logs.format json makes every gateway.log line one
// JSON object, and the size and count of rotated files are settings the API writes within bounds.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { errorCode, gatewayPerSuite, makeHome } from "./helpers/gateway";

const home = makeHome();
mkdirSync(home, { recursive: true });
writeFileSync(join(home, "config.json"), JSON.stringify({ logs: { format: "json", max_size_mb: 1, max_files: 2 } }));

describe("gateway.log written as JSON lines", () => {
  const gw = gatewayPerSuite({ home });

  it("writes every line of a start as one object with time, level, source and message", () => {
    const lines = readFileSync(join(home, "logs", "gateway.log"), "utf8")
      .split("\n")
      .slice(0, -1);
    expect(lines.length).toBeGreaterThan(3);
    const entries = lines.map((line) => JSON.parse(line) as Record<string, string>);
    for (const entry of entries) {
      expect(Object.keys(entry)).toEqual(["time", "level", "source", "message"]);
      expect(new Date(entry.time!).toISOString()).toBe(entry.time);
      expect(["debug", "info", "warning", "error"]).toContain(entry.level);
    }
    expect(entries.some((entry) => entry.source === "bridge")).toBe(true);
  });

  it("takes logs.max_size_mb of at least 1 and logs.max_files through the settings API", async () => {
    const patch = (path: string, value: unknown) =>
      gw.fetch("/api/config/personalclaw", {
        method: "PATCH",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ path, value }),
      });
    const tooSmall = await patch("logs.max_size_mb", 0);
    expect(tooSmall.status).toBe(400);
    expect(await errorCode(tooSmall)).toBe("setting_value_invalid");
    expect((await patch("logs.max_size_mb", 3)).status).toBe(200);
    expect((await patch("logs.max_files", 9)).status).toBe(200);
    const written = JSON.parse(readFileSync(join(home, "config.json"), "utf8")) as { logs: Record<string, unknown> };
    expect(written.logs).toMatchObject({ format: "json", max_size_mb: 3, max_files: 9 });
  });
});
