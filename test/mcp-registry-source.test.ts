// `personalclaw apps add registry:` end to end (issue 36): the real `personalclaw start`, the real
// CLI, a local MCP Registry stand-in serving server-memory's entry in the registry API v0.1's
// shape (test/fixtures/mcp-registry/) on a loopback address configured as install.mcp_registries,
// the npm stand-in serving the package's vendored tarballs as install.npm_registry, the one
// install path every npm: app takes (review, consent digest, confined npm ci), and the official
// MCP SDK client started from mcp.json as an agent starts it.
//
// Homes live under /var/tmp, not /tmp: the sandbox gives every child a private /tmp.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorCode, runCli, startGateway, type RunningGateway } from "./helpers/gateway";
import { registryFixture, startMcpRegistry, type McpRegistryStandIn } from "./helpers/mcp-registry";
import { startNpmRegistry, type NpmRegistryStandIn } from "./helpers/npm-registry";
// @ts-expect-error a bundled ES module without types
import { Client, StdioClientTransport } from "./fixtures/mcp-client-sdk.mjs";
import { allowEveryTool } from "./helpers/mcp-tool-policy";

const NAME = "io.github.modelcontextprotocol/server-memory";
const SPEC = `registry:${NAME}`;
const APP = "server-memory";
const MEMORY_ENV = "MEMORY_FILE_PATH=${DATA}/memory.jsonl";

describe("apps add registry: an MCP Registry entry installs as its npm package, pinned, consented and confined", () => {
  let root: string;
  let ownerHome: string;
  let home: string;
  let gw: RunningGateway;
  let npm: NpmRegistryStandIn;
  let registry: McpRegistryStandIn;
  const cli = (args: string[], timeoutMs = 180_000) =>
    runCli([...args, "--home", home], { HOME: ownerHome }, timeoutMs);

  beforeAll(async () => {
    root = mkdtempSync("/var/tmp/pc-mcp-registry-");
    ownerHome = join(root, "owner");
    home = join(ownerHome, ".personalclaw");
    mkdirSync(home, { recursive: true });
    npm = await startNpmRegistry();
    registry = await startMcpRegistry({ entries: [registryFixture("server-memory.json")] });
    // The owner names both stand-ins' loopback addresses: the one way a local address is reached.
    writeFileSync(
      join(home, "config.json"),
      JSON.stringify({ install: { npm_registry: npm.url, mcp_registries: [registry.url] } }),
    );
    gw = await startGateway({ home, env: { HOME: ownerHome } });
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    await npm?.close();
    await registry?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("without consent it shows the review: the registry, the entry, its namespace and version, the package it resolved to", async () => {
    const shown = await cli(["apps", "add", SPEC]);
    expect(shown.code, shown.stderr).toBe(1);
    expect(shown.stderr).toContain(
      `MCP Registry entry: ${NAME} 2025.8.4 (namespace io.github.modelcontextprotocol) from ${registry.url}, not the official MCP Registry`,
    );
    expect(shown.stderr).toContain("Resolved to: npm:@modelcontextprotocol/server-memory@2025.8.4");
    expect(shown.stderr).toContain("MEMORY_FILE_PATH (not given (optional): add --env MEMORY_FILE_PATH=VALUE)");
    expect(shown.stderr).toContain(`Source: npm:@modelcontextprotocol/server-memory@2025.8.4 from ${npm.url}`);
    expect(shown.stderr).toMatch(/15 npm packages pinned by sha512 integrity/);
    expect(shown.stderr).toContain("consent_required");
    expect(shown.stderr).toContain(`apps add ${SPEC}`);
    expect(registry.requests).toContain("/v0.1/servers/io.github.modelcontextprotocol%2Fserver-memory/versions/latest");
    expect(existsSync(join(home, "apps", APP))).toBe(false);
  }, 120_000);

  it("a name no configured registry has is refused with mcp_registry_entry_not_found and installs nothing", async () => {
    const refused = await cli(["apps", "add", "registry:io.github.nobody/nothing", "--yes", "--json"]);
    expect(refused.code).not.toBe(0);
    const envelope = JSON.parse(refused.stdout.trim().split("\n").at(-1)!);
    expect(envelope.error.code).toBe("mcp_registry_entry_not_found");
    expect(envelope.error.message).toContain(registry.url);
  });

  it("--yes installs it; an MCP client started from mcp.json lists its tools, calls one and the data lands in data/", async () => {
    const added = await cli(["apps", "add", `${SPEC}@2025.8.4`, "--env", MEMORY_ENV, "--yes"]);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain(`Installed ${APP} 2025.8.4`);
    const appDir = join(home, "apps", APP);
    const entry = (
      JSON.parse(readFileSync(join(home, "mcp.json"), "utf8")) as {
        mcpServers: Record<string, { command: string; args: string[] }>;
      }
    ).mcpServers[`${APP}:${APP}`]!;
    const client = new Client({ name: "test-agent", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: entry.command,
        args: entry.args,
        env: { PATH: process.env.PATH!, HOME: ownerHome },
      }),
    );
    await allowEveryTool(gw, client, APP, APP);
    try {
      const tools = (await client.listTools()).tools.map((t: { name: string }) => t.name);
      expect(tools).toEqual(expect.arrayContaining(["create_entities", "read_graph", "search_nodes"]));
      await client.callTool({
        name: "create_entities",
        arguments: { entities: [{ name: "Grace", entityType: "person", observations: ["from a registry entry"] }] },
      });
      const read = await client.callTool({ name: "read_graph", arguments: {} });
      expect((read.content as Array<{ text: string }>)[0]!.text).toContain("from a registry entry");
    } finally {
      await client.close();
    }
    expect(readFileSync(join(appDir, "data", "memory.jsonl"), "utf8")).toContain('"name":"Grace"');
  }, 300_000);

  it("adding the entry again answers app_exists and points at apps update with a registry: source", async () => {
    const again = await cli(["apps", "add", SPEC, "--yes", "--json"]);
    const envelope = JSON.parse(again.stdout.trim().split("\n").at(-1)!);
    expect(envelope.error.code).toBe("app_exists");
    expect(envelope.error.message).toContain(`apps update server-memory ${SPEC} `);
  }, 120_000);

  it("apps update from the entry's newer version names the entry's change and asks consent; --yes updates, keeping data/", async () => {
    const next = registryFixture("server-memory.json");
    next.server.version = "2025.8.4-1";
    registry.publish(next);
    const resolvedTo = "(npm:@modelcontextprotocol/server-memory@2025.8.4)";
    const shown = await cli(["apps", "update", APP, SPEC, "--env", MEMORY_ENV]);
    expect(shown.code, shown.stderr).toBe(1);
    expect(shown.stderr).toContain(
      `changed MCP Registry entry: ${NAME} 2025.8.4 from ${registry.url} ${resolvedTo} -> ${NAME} 2025.8.4-1 from ${registry.url} ${resolvedTo}`,
    );
    expect(shown.stderr).toContain("consent_required");
    const updated = await cli(["apps", "update", APP, SPEC, "--env", MEMORY_ENV, "--yes"]);
    expect(updated.code, updated.stderr).toBe(0);
    const listed = JSON.parse((await cli(["apps", "list", "--json"])).stdout);
    expect(listed.apps.find((a: { name: string }) => a.name === APP)).toBeDefined();
    expect(readFileSync(join(home, "apps", APP, "data", "memory.jsonl"), "utf8")).toContain('"name":"Grace"');
  }, 300_000);

  it("adding a registry to install.mcp_registries is a loosening the owner consents to", async () => {
    const asked = await gw.fetch("/api/config/personalclaw", {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ path: "install.mcp_registries", add: "https://mcp.example.com/" }),
    });
    expect(await errorCode(asked)).toBe("confirmation_required");
    expect(JSON.parse(readFileSync(join(home, "config.json"), "utf8")).install.mcp_registries).toEqual([registry.url]);
  });
});
