// An MCP server of an app with Python dependencies runs the app's venv interpreter (issue 36,
// item 4): the real `personalclaw start`, a real install through the CLI (the venv made and the
// wheel installed confined, offline from the app's wheels/), and the official MCP SDK client
// started from mcp.json as an agent starts it. The server (test/fixtures/py-mcp-words) imports
// pc_word_tools, a package built here as a wheel and installed only in the venv: run by the
// host's python3 it stops at "No module named 'pc_word_tools'".
//
// Homes live under /var/tmp, not /tmp: the sandbox gives every child a private /tmp.
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot, runCli, startGateway, type RunningGateway } from "./helpers/gateway";
import { buildWheel } from "./helpers/python-wheel";
import { agentFromMcpJson } from "./helpers/mcp-agent";
import { allowEveryTool } from "./helpers/mcp-tool-policy";

const FIXTURE = join(repoRoot, "test", "fixtures", "py-mcp-words");
const APP = "py-mcp-words";

describe("a Python MCP server runs with its app's venv", () => {
  let root: string;
  let ownerHome: string;
  let home: string;
  let appSource: string;
  let gw: RunningGateway;
  const cli = (args: string[], timeoutMs = 180_000) =>
    runCli([...args, "--home", home], { HOME: ownerHome }, timeoutMs);

  beforeAll(async () => {
    root = mkdtempSync("/var/tmp/pc-py-mcp-");
    ownerHome = join(root, "owner");
    home = join(ownerHome, ".personalclaw");
    mkdirSync(home, { recursive: true });
    appSource = join(root, "app");
    cpSync(join(FIXTURE, "app"), appSource, { recursive: true });
    buildWheel(join(appSource, "wheels"), "pc-word-tools", "1.0.0", join(FIXTURE, "wheel-src"));
    gw = await startGateway({ home, env: { HOME: ownerHome } });
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("the server's dependency is not importable by the host's python3", () => {
    let stderr = "";
    try {
      execFileSync("python3", ["-I", "server.py"], { cwd: appSource, input: "", stdio: ["pipe", "pipe", "pipe"] });
    } catch (error) {
      stderr = String((error as { stderr: Buffer }).stderr);
    }
    expect(stderr).toContain("No module named 'pc_word_tools'");
  });

  it("installed, its server started from mcp.json answers: tools listed and called, the venv's python running it", async () => {
    const installed = await cli(["apps", "install", appSource, "--yes"]);
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stderr).toContain("python dependencies: done");
    const { client, stderr } = await agentFromMcpJson(home, `${APP}:words`, ownerHome);
    try {
      await allowEveryTool(gw, client, APP, "words");
      const tools = (await client.listTools()).tools.map((t: { name: string }) => t.name).sort();
      expect(tools, stderr()).toEqual(["count_words", "interpreter"]);
      const counted = await client.callTool({ name: "count_words", arguments: { text: "one two three four" } });
      expect((counted.content as Array<{ text: string }>)[0]!.text).toBe("4");
      const which = await client.callTool({ name: "interpreter", arguments: {} });
      const seen = JSON.parse((which.content as Array<{ text: string }>)[0]!.text) as {
        prefix: string;
        module: string;
      };
      expect(seen.prefix).toMatch(/\/venv$/);
      expect(seen.module).toMatch(/\/venv\/lib\/python3[.\d]*\/site-packages\/pc_word_tools\/__init__\.py$/);
    } finally {
      await client.close();
    }
    expect(stderr()).not.toContain("No module named");
  }, 300_000);
});
