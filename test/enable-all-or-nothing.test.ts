// Enable and disable are all or nothing: a step that fails undoes the ones before it, so a
// disabled app whose mcp.json cannot be written is left wholly off (no backend running), and
// an enable that fails answers a stable code.
import { describe, expect, it } from "vitest";
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { errorCode, gatewayPerSuite, repoRoot } from "./helpers/gateway";
import { backendOf, install, waitForRow } from "./helpers/backends";

const mcpNotes = join(repoRoot, "apps", "fixtures", "mcp-notes");
const json = { "content-type": "application/json" };

describe("enabling an app whose mcp.json cannot be written", () => {
  const gw = gatewayPerSuite();

  it("fails with mcp_json_unreadable and leaves the disabled app's backend stopped", async () => {
    await install(gw.home, mcpNotes);
    expect(await waitForRow(gw, "mcp-notes", (row) => row.healthy)).not.toBeNull();
    const disabled = await gw.fetch("/api/apps/mcp-notes/disable", { method: "POST", headers: json, body: "{}" });
    expect(disabled.status).toBe(200);
    expect((await backendOf(gw, "mcp-notes"))?.running ?? false).toBe(false);

    // A folder at mcp.json's path: it can be neither read nor written.
    const file = join(gw.home, "mcp.json");
    if (existsSync(file)) renameSync(file, `${file}.kept`);
    mkdirSync(file);
    try {
      const enabled = await gw.fetch("/api/apps/mcp-notes/enable", { method: "POST", headers: json, body: "{}" });
      expect(enabled.status).toBe(500);
      expect(await errorCode(enabled)).toBe("mcp_json_unreadable");
      // Give a started backend time to show: none may appear.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const row = await (await gw.fetch("/api/apps/mcp-notes")).json();
      expect(row.enabled).toBe(false);
      expect(row.backend?.running ?? false).toBe(false);
    } finally {
      rmSync(file, { recursive: true, force: true });
      if (existsSync(`${file}.kept`)) renameSync(`${file}.kept`, file);
    }
    // With mcp.json writable again, the same enable succeeds.
    const again = await gw.fetch("/api/apps/mcp-notes/enable", { method: "POST", headers: json, body: "{}" });
    expect(again.status).toBe(200);
    expect(await waitForRow(gw, "mcp-notes", (row) => row.healthy)).not.toBeNull();
  }, 120_000);
});
