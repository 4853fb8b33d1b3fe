// Uninstall is all or nothing up to the app's files (issue 33.7), on a real gateway with real
// bubblewrap: a refusal before the files go (mcp.json unreadable, parked data in the way)
// leaves the app whole — its record, its running backend, its job and its servers in
// mcp.json — and the same uninstall succeeds once the fault is gone.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { errorCode, gatewayPerSuite, repoRoot, type RunningGateway } from "./helpers/gateway";
import { install, waitForRow } from "./helpers/backends";

const APP = "mcp-notes";
const json = { "content-type": "application/json" };

function uninstall(gw: RunningGateway): Promise<Response> {
  return gw.fetch(`/api/apps/${APP}`, { method: "DELETE", headers: json, body: "{}" });
}

/** Everything an installed, enabled mcp-notes has: its record, a serving backend, its job and its server in mcp.json. */
async function expectWhole(gw: RunningGateway): Promise<void> {
  const row = await gw.fetch(`/api/apps/${APP}`);
  expect(row.status).toBe(200);
  expect(((await row.json()) as { enabled: boolean }).enabled).toBe(true);
  expect((await waitForRow(gw, APP, (backend) => backend.healthy))?.healthy).toBe(true);
  const served = await gw.fetch(`/apps/${APP}/api/ticks`);
  expect(served.status).toBe(200);
  const jobs = (await (await gw.fetch(`/api/apps/${APP}/jobs`)).json()) as { jobs: Array<{ name: string }> };
  expect(jobs.jobs.map((job) => job.name)).toEqual(["tick"]);
  const mcp = JSON.parse(readFileSync(join(gw.home, "mcp.json"), "utf8")) as { mcpServers: Record<string, unknown> };
  expect(Object.keys(mcp.mcpServers)).toContain(`${APP}:notes`);
}

describe("an uninstall refused before the app's files go", () => {
  const gw = gatewayPerSuite();

  it("with mcp.json unreadable answers mcp_json_unreadable and leaves the app whole", async () => {
    await install(gw.home, join(repoRoot, "apps", "fixtures", APP));
    await expectWhole(gw);
    // A folder at mcp.json's path: it can be neither read nor written.
    const file = join(gw.home, "mcp.json");
    renameSync(file, `${file}.kept`);
    mkdirSync(file);
    try {
      const refused = await uninstall(gw);
      expect(refused.status).toBe(500);
      expect(await errorCode(refused)).toBe("mcp_json_unreadable");
    } finally {
      rmSync(file, { recursive: true, force: true });
      renameSync(`${file}.kept`, file);
    }
    await expectWhole(gw);
  }, 120_000);

  it("with an earlier install's parked data in the way answers parked_data_exists, keeps its job and its servers", async () => {
    const parked = join(gw.home, "apps", `.${APP}.data`);
    mkdirSync(join(gw.home, "apps", APP, "data"), { recursive: true });
    mkdirSync(parked);
    try {
      const refused = await uninstall(gw);
      expect(refused.status).toBe(409);
      expect(await errorCode(refused)).toBe("parked_data_exists");
      await expectWhole(gw);
    } finally {
      rmSync(parked, { recursive: true, force: true });
    }
    // With the fault gone the same uninstall succeeds.
    const removed = await uninstall(gw);
    expect(removed.status).toBe(200);
    expect((await gw.fetch(`/api/apps/${APP}`)).status).toBe(404);
    expect(existsSync(join(gw.home, "apps", APP))).toBe(false);
    const mcp = JSON.parse(readFileSync(join(gw.home, "mcp.json"), "utf8")) as { mcpServers: Record<string, unknown> };
    expect(Object.keys(mcp.mcpServers)).not.toContain(`${APP}:notes`);
  }, 120_000);
});
