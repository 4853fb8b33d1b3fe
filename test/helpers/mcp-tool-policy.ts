// For suites about something other than the tool policy (issue 39): lets every tool of one app
// server through `mcp run` without asking, as an owner who trusts it would.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import type { RunningGateway } from "./gateway";

/**
 * Lists the server's tools once through the agent's `client` (the first listing of an install
 * pins them), then sets each pinned tool's policy to allow as the owner, present.
 */
export async function allowEveryTool(gw: RunningGateway, client: any, app: string, server: string): Promise<void> {
  await client.listTools();
  const answer = await gw.fetch(`/api/mcp/${app}/tools`);
  expect(answer.status).toBe(200);
  const body = (await answer.json()) as {
    servers: Array<{ server: string; tools: Array<{ name: string; pinned: unknown; policy: string }> }>;
  };
  const presence = { "x-local-secret": readFileSync(join(gw.home, ".local_secret"), "utf8").trim() };
  for (const tool of body.servers.find((s) => s.server === server)?.tools ?? []) {
    if (tool.pinned === null || tool.policy === "allow") continue;
    const set = await gw.fetch(`/api/mcp/${app}/${server}/tools/${encodeURIComponent(tool.name)}/policy`, {
      method: "POST",
      headers: { "content-type": "application/json", ...presence },
      body: JSON.stringify({ policy: "allow" }),
    });
    expect(set.status, await set.clone().text()).toBe(200);
  }
}
