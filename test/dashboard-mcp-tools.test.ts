// An app's MCP tools in the dashboard (issue 39), in a real Chromium against a real gateway and a
// real confined server driven by the official MCP SDK client as the agent: the app page shows
// each pinned tool's state and policy switch; the owner flips a switch; a call whose policy is
// ask waits until the owner approves it in the Inbox, then completes; the recent calls show it;
// the owner turns on the logging of a tool's argument values and the recent calls show them.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { launchChromium } from "./helpers/browser";
import { seriousViolations } from "./helpers/axe";
import { removeHome, repoRoot, runCli, startGateway, type RunningGateway } from "./helpers/gateway";
import { install } from "./helpers/backends";
// @ts-expect-error a bundled ES module without types
import { Client, StdioClientTransport } from "./fixtures/mcp-client-sdk.mjs";

const APP = "mcp-tools";

describe("an app's MCP tools on its page and an ask call in the Inbox", () => {
  let gw: RunningGateway;
  let browser: Browser;
  let agent: any;

  beforeAll(async () => {
    [gw, browser] = await Promise.all([startGateway(), launchChromium()]);
    await install(gw.home, join(repoRoot, "test", "fixtures", "backend-apps", APP));
    const entry = (
      JSON.parse(readFileSync(join(gw.home, "mcp.json"), "utf8")) as {
        mcpServers: Record<string, { command: string; args: string[] }>;
      }
    ).mcpServers[`${APP}:tools`]!;
    agent = new Client({ name: "test-agent", version: "1.0.0" });
    await agent.connect(
      new StdioClientTransport({ command: entry.command, args: entry.args, env: { PATH: process.env.PATH! } }),
    );
    await agent.listTools();
  }, 90_000);
  afterAll(async () => {
    await agent?.close();
    await browser?.close();
    await gw?.stop();
    if (gw) removeHome(gw.home);
  });

  async function signedInPage(hash: string): Promise<Page> {
    const minted = await runCli(["token", "--home", gw.home]);
    expect(minted.code, minted.stderr).toBe(0);
    const page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(minted.stdout.trim());
    await page.locator("[data-fact=version] dd").waitFor();
    await page.goto(`${gw.base}/${hash}`);
    return page;
  }

  async function policyOf(tool: string): Promise<string> {
    const body = (await (await gw.fetch(`/api/mcp/${APP}/tools`)).json()) as {
      servers: Array<{ tools: Array<{ name: string; policy: string }> }>;
    };
    return body.servers[0]!.tools.find((t) => t.name === tool)!.policy;
  }

  it("shows each pinned tool's state and switch; a switch sets the policy, axe-clean", async () => {
    const page = await signedInPage(`#/apps/${APP}`);
    const part = page.locator("#app-tools");
    const write = part.locator("tr[data-tool=write_note]");
    await write.waitFor();
    expect(await part.locator("tr[data-tool=read_note] input[value=allow]").isChecked()).toBe(true);
    expect(await write.locator("input[value=ask]").isChecked()).toBe(true);
    expect(await part.locator("tr[data-tool=personalclaw_status]").textContent()).toContain("kept for the platform");
    expect(await seriousViolations(page)).toEqual([]);

    await write.getByLabel("deny").check();
    await expect.poll(() => policyOf("write_note")).toBe("deny");
    // Loosening back to ask: this sign-in is fresh, which is the owner's presence.
    await part.locator("tr[data-tool=write_note]").getByLabel("ask").check();
    await expect.poll(() => policyOf("write_note")).toBe("ask");
    expect(await seriousViolations(page)).toEqual([]);
  });

  it("a call whose policy is ask waits until the owner approves it in the Inbox, then completes", async () => {
    const call = agent.callTool({ name: "write_note", arguments: { text: "from the agent" } });
    const page = await signedInPage("#/inbox");
    const card = page.locator(".approval", { hasText: "write_note" });
    await card.waitFor();
    expect(await card.textContent()).toContain('{"text":"from the agent"}');
    expect(await seriousViolations(page)).toEqual([]);
    await card.getByRole("button", { name: "Approve once" }).click();
    const result = await call;
    expect((result.content as Array<{ text: string }>)[0]!.text).toBe("wrote from the agent");

    await page.goto(`${gw.base}/#/apps/${APP}`);
    await expect
      .poll(() => page.locator("#app-tools .tool-calls li[data-outcome=approved]").count())
      .toBeGreaterThanOrEqual(1);
  });

  it("the owner turns on the logging of a tool's argument values; the recent calls then show them", async () => {
    const page = await signedInPage(`#/apps/${APP}`);
    const read = page.locator("#app-tools tr[data-tool=describe_me]");
    const logged = read.getByLabel("log argument values");
    expect(await logged.isChecked()).toBe(false);
    await logged.check();
    await page.locator("#app-tools .notices", { hasText: "argument values are logged" }).waitFor();
    await agent.callTool({ name: "describe_me", arguments: { text: "shown to the owner" } });
    await page.reload();
    await expect
      .poll(() => page.locator("#app-tools .tool-calls li", { hasText: "shown to the owner" }).count(), {
        timeout: 15_000,
      })
      .toBe(1);
    expect(
      await page.locator("#app-tools tr[data-tool=describe_me]").getByLabel("log argument values").isChecked(),
    ).toBe(true);
    expect(await seriousViolations(page)).toEqual([]);
  });
});
