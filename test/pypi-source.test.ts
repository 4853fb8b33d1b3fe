// `personalclaw apps add pypi:` end to end (issue 36): the real `personalclaw start`, the real CLI,
// a PyPI-shaped index stand-in (PEP 691 JSON) on a loopback address configured as
// install.pypi_index, serving wheels built here from small pure-Python packages: an MCP server
// project with a console script, which requires pc-word-tools as '>=1.0,<2' (the index has 1.0.0
// and 2.0.0). The closure is pinned by sha256, installed confined from the app's wheels/, and the
// official MCP SDK client started from mcp.json runs the server with the app's venv.
//
// Homes live under /var/tmp, not /tmp: the sandbox gives every child a private /tmp.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, startGateway, type RunningGateway } from "./helpers/gateway";
import type { PypiIndexStandIn } from "./helpers/pypi-index";
import { startWordsIndex, WORDS_APP, WORDS_SPEC } from "./helpers/pypi-words-app";
import { agentFromMcpJson } from "./helpers/mcp-agent";
import { allowEveryTool } from "./helpers/mcp-tool-policy";

const SPEC = WORDS_SPEC;
const APP = WORDS_APP;

describe("apps add pypi: a Python MCP server installs pinned by sha256, consented and confined", () => {
  let root: string;
  let ownerHome: string;
  let home: string;
  let gw: RunningGateway;
  let index: PypiIndexStandIn;
  let toolsWheel: string;
  const cli = (args: string[], timeoutMs = 180_000) =>
    runCli([...args, "--home", home], { HOME: ownerHome }, timeoutMs);

  beforeAll(async () => {
    root = mkdtempSync("/var/tmp/pc-pypi-source-");
    ownerHome = join(root, "owner");
    home = join(ownerHome, ".personalclaw");
    mkdirSync(home, { recursive: true });
    ({ index, toolsWheel } = await startWordsIndex(root));
    // The owner names the stand-in's loopback address as the index: the one way a local address is reached.
    writeFileSync(join(home, "config.json"), JSON.stringify({ install: { pypi_index: index.url } }));
    gw = await startGateway({ home, env: { HOME: ownerHome } });
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    await index?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("without consent it shows the review (the pinned wheels, the server, its source) and installs nothing", async () => {
    const shown = await cli(["apps", "add", SPEC]);
    expect(shown.code, shown.stderr).toBe(1);
    expect(shown.stderr).toContain("Python packages: pc-mcp-words-server==1.0.0, pc-word-tools==1.0.0");
    expect(shown.stderr).toContain(`${SPEC} from ${index.url}`);
    // The summary the review opens the source with: what it is, no publisher it can check, what is pinned.
    expect(shown.stderr).toContain("Where it comes from: PyPI project pc-mcp-words-server 1.0.0\n");
    expect(shown.stderr).toMatch(/ {2}Pinned: 2 wheels, [0-9.]+ KiB, each by its sha256\n {2}Native code: none\n/);
    expect(shown.stderr).toContain("Wheels that are not pure Python: none");
    expect(shown.stderr).toContain("python3 run-server.py");
    expect(shown.stderr).toContain("Reaches hosts (enforced): none: no network at all");
    expect(shown.stderr).toContain("consent_required");
    expect(shown.stderr).toContain(`apps add ${SPEC} --consent`);
    // The extra's requirement is left out: the index was never asked for it.
    expect(index.requests).not.toContain("/simple/pc-word-tools-docs/");
    expect(existsSync(join(home, "apps", APP))).toBe(false);
  });

  it("a wheel whose bytes differ from the sha256 the index publishes is refused, naming the file", async () => {
    index.tamper(basename(toolsWheel));
    try {
      const refused = await cli(["apps", "add", SPEC, "--yes", "--json"]);
      expect(refused.code).not.toBe(0);
      const envelope = JSON.parse(refused.stdout.trim().split("\n").at(-1)!);
      expect(envelope.error.code).toBe("pypi_hash_mismatch");
      expect(envelope.error.message).toContain(basename(toolsWheel));
    } finally {
      index.restore(basename(toolsWheel));
    }
    expect(existsSync(join(home, "apps", APP))).toBe(false);
  });

  it("--yes installs it confined; an MCP client from mcp.json lists and calls its tools, run by the venv", async () => {
    const added = await cli(["apps", "add", SPEC, "--yes"]);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain(`Installed ${APP} 1.0.0`);
    const pins = JSON.parse(readFileSync(join(home, "apps", APP, "pypi-closure.json"), "utf8"));
    expect(pins.wheels.map((w: { file: string }) => w.file)).toEqual([
      "pc_mcp_words_server-1.0.0-py3-none-any.whl",
      "pc_word_tools-1.0.0-py3-none-any.whl",
    ]);
    const { client } = await agentFromMcpJson(home, `${APP}:${APP}`, ownerHome);
    try {
      await allowEveryTool(gw, client, APP, APP);
      const tools = (await client.listTools()).tools.map((t: { name: string }) => t.name).sort();
      expect(tools).toEqual(["count_words", "interpreter"]);
      const counted = await client.callTool({ name: "count_words", arguments: { text: "one two three four" } });
      expect((counted.content as Array<{ text: string }>)[0]!.text).toBe("4");
      const which = await client.callTool({ name: "interpreter", arguments: {} });
      const seen = JSON.parse((which.content as Array<{ text: string }>)[0]!.text) as { prefix: string };
      expect(seen.prefix).toMatch(/\/venv$/);
    } finally {
      await client.close();
    }
  }, 300_000);
});
