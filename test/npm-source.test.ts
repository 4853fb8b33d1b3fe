// `personalclaw apps add npm:` end to end (issue 36): the real `personalclaw start`, the real CLI,
// a local npm registry stand-in serving the vendored, published tarballs of
// @modelcontextprotocol/server-memory and its closure on a loopback address configured as
// install.npm_registry, the confined installer (bubblewrap, npm ci, no scripts), and the
// official MCP SDK client started from mcp.json as an agent starts it.
//
// Homes live under /var/tmp, not /tmp: the sandbox gives every child a private /tmp.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, startGateway, type RunningGateway } from "./helpers/gateway";
import { startNpmRegistry, type NpmRegistryStandIn } from "./helpers/npm-registry";
// @ts-expect-error a bundled ES module without types
import { Client, StdioClientTransport } from "./fixtures/mcp-client-sdk.mjs";

const SPEC = "npm:@modelcontextprotocol/server-memory@2025.8.4";
const APP = "server-memory";

describe("apps add npm: a published MCP server installs pinned, consented and confined", () => {
  let root: string;
  let ownerHome: string;
  let home: string;
  let gw: RunningGateway;
  let registry: NpmRegistryStandIn;
  const cli = (args: string[], timeoutMs = 180_000) =>
    runCli([...args, "--home", home], { HOME: ownerHome }, timeoutMs);
  const mcpEntry = () =>
    (
      JSON.parse(readFileSync(join(home, "mcp.json"), "utf8")) as {
        mcpServers: Record<string, { command: string; args: string[] }>;
      }
    ).mcpServers[`${APP}:${APP}`];

  async function connect(): Promise<any> {
    const entry = mcpEntry()!;
    const transport = new StdioClientTransport({
      command: entry.command,
      args: entry.args,
      env: { PATH: process.env.PATH!, HOME: ownerHome },
    });
    const client = new Client({ name: "test-agent", version: "1.0.0" });
    await client.connect(transport);
    return client;
  }

  beforeAll(async () => {
    root = mkdtempSync("/var/tmp/pc-npm-source-");
    ownerHome = join(root, "owner");
    home = join(ownerHome, ".personalclaw");
    mkdirSync(home, { recursive: true });
    registry = await startNpmRegistry();
    // The owner names the stand-in's loopback address as the npm source: the one way a local address is reached.
    writeFileSync(join(home, "config.json"), JSON.stringify({ install: { npm_registry: registry.url } }));
    gw = await startGateway({ home, env: { HOME: ownerHome } });
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    await registry?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("without consent it shows the review (source, version, package count, size, env) and installs nothing", async () => {
    const shown = await cli(["apps", "add", SPEC, "--env", "MEMORY_FILE_PATH=${DATA}/memory.jsonl"]);
    expect(shown.code, shown.stderr).toBe(1);
    expect(shown.stderr).toContain(`Source: npm:@modelcontextprotocol/server-memory@2025.8.4 from ${registry.url}`);
    expect(shown.stderr).toMatch(/15 npm packages pinned by sha512 integrity, \d+ bytes of tarballs/);
    expect(shown.stderr).toContain("MEMORY_FILE_PATH=${DATA}/memory.jsonl");
    expect(shown.stderr).toContain("HOME=${DATA}");
    expect(shown.stderr).toContain("Reaches hosts (enforced): none: no network at all");
    expect(shown.stderr).toContain("consent_required");
    expect(shown.stderr).toMatch(/apps add npm:@modelcontextprotocol\/server-memory@2025\.8\.4 --env/);
    expect(existsSync(join(home, "apps", APP))).toBe(false);
  });

  it("a tarball changed by one byte after it was pinned is refused by the confined installer with a code naming the package", async () => {
    // The resolver pins the published bytes; the installer's fetch gets the changed ones.
    registry.tamper("depd", "2.0.0", 1);
    try {
      const refused = await cli(["apps", "add", SPEC, "--yes", "--json"]);
      expect(refused.code).not.toBe(0);
      const envelope = JSON.parse(refused.stdout.trim().split("\n").at(-1)!);
      expect(envelope.error.code).toBe("npm_integrity_mismatch");
      expect(envelope.error.message).toContain("depd@2.0.0");
    } finally {
      registry.restore("depd", "2.0.0");
    }
    expect(existsSync(join(home, "apps", APP))).toBe(false);
  }, 300_000);

  it("--yes installs it; an MCP client started from mcp.json lists its tools and its data lands in the app's data/", async () => {
    const added = await cli(["apps", "add", SPEC, "--env", "MEMORY_FILE_PATH=${DATA}/memory.jsonl", "--yes"]);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain(`Installed ${APP} 2025.8.4`);
    const appDir = join(home, "apps", APP);
    expect(existsSync(join(appDir, "node_modules", "@modelcontextprotocol", "server-memory", "dist", "index.js"))).toBe(
      true,
    );
    const client = await connect();
    try {
      const tools = (await client.listTools()).tools.map((t: { name: string }) => t.name);
      expect(tools).toEqual(expect.arrayContaining(["create_entities", "read_graph", "search_nodes"]));
      await client.callTool({
        name: "create_entities",
        arguments: { entities: [{ name: "Ada", entityType: "person", observations: ["kept across restarts"] }] },
      });
    } finally {
      await client.close();
    }
    const stored = readFileSync(join(appDir, "data", "memory.jsonl"), "utf8");
    expect(stored).toContain('"name":"Ada"');
  }, 300_000);

  it("the data survives a gateway restart: a new client reads back what the first one wrote", async () => {
    await gw.stop();
    gw = await startGateway({ home, env: { HOME: ownerHome } });
    const client = await connect();
    try {
      const result = await client.callTool({ name: "read_graph", arguments: {} });
      const text = (result.content as Array<{ text: string }>)[0]!.text;
      expect(text).toContain("kept across restarts");
    } finally {
      await client.close();
    }
  }, 120_000);

  it("adding the same package again answers app_exists and points at apps update", async () => {
    const again = await cli(["apps", "add", SPEC, "--yes", "--json"]);
    const envelope = JSON.parse(again.stdout.trim().split("\n").at(-1)!);
    expect(envelope.error.code).toBe("app_exists");
    expect(envelope.error.message).toContain("apps update");
  });
});
