// `personalclaw apps add <bundle>.mcpb` end to end (issue 36): a real .mcpb packed as the official
// packer packs one (manifest.json, a small Node MCP server, its node_modules: the published
// @modelcontextprotocol/sdk 1.0.1 and its closure from the vendored npm fixtures), the real
// `personalclaw start`, the real CLI, the confined install, and the official MCP SDK client
// started from mcp.json as an agent starts it.
//
// Homes live under /var/tmp, not /tmp: the sandbox gives every child a private /tmp.
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, startGateway, type RunningGateway } from "./helpers/gateway";
import { packMcpb, sdkNodeModules } from "./helpers/mcpb-pack";
import { agentFromMcpJson } from "./helpers/mcp-agent";
import { allowEveryTool } from "./helpers/mcp-tool-policy";

const APP = "pc-notes";

const SERVER = `import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const notesFile = process.env.NOTES_FILE;
const greeting = (process.argv.find((a) => a.startsWith("--greeting=")) ?? "--greeting=").slice(11);
const server = new Server({ name: "notes", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    { name: "remember", description: "Keep a note", inputSchema: { type: "object", properties: { text: { type: "string" } } } },
    { name: "recall", description: "Read the notes back", inputSchema: { type: "object", properties: {} } },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  if (request.params.name === "remember") {
    appendFileSync(notesFile, JSON.stringify({ text: request.params.arguments.text }) + "\\n");
    return { content: [{ type: "text", text: "kept" }] };
  }
  const notes = existsSync(notesFile) ? readFileSync(notesFile, "utf8") : "";
  return { content: [{ type: "text", text: greeting + ": " + notes }] };
});
await server.connect(new StdioServerTransport());
`;

const MANIFEST = {
  manifest_version: "0.3",
  name: APP,
  display_name: "Notes",
  version: "1.0.0",
  description: "Keeps notes in its own data folder",
  author: { name: "PersonalClaw Tests", email: "tests@example.com" },
  server: {
    type: "node",
    entry_point: "server/index.js",
    mcp_config: {
      command: "node",
      args: ["${__dirname}/server/index.js", "--greeting=${user_config.greeting}"],
      env: { NOTES_FILE: "${HOME}/notes.jsonl" },
    },
  },
  user_config: {
    greeting: { type: "string", title: "Greeting", description: "How recall begins", default: "hello" },
  },
  compatibility: { platforms: ["darwin", "win32", "linux"], runtimes: { node: ">=18.0.0" } },
};

describe("apps add <bundle>.mcpb: an MCPB bundle installs pinned to its bytes, consented and confined", () => {
  let root: string;
  let ownerHome: string;
  let home: string;
  let bundlePath: string;
  let gw: RunningGateway;
  const cli = (args: string[], timeoutMs = 180_000) =>
    runCli([...args, "--home", home], { HOME: ownerHome }, timeoutMs);

  beforeAll(async () => {
    root = mkdtempSync("/var/tmp/pc-mcpb-source-");
    ownerHome = join(root, "owner");
    home = join(ownerHome, ".personalclaw");
    mkdirSync(home, { recursive: true });
    const bundle = packMcpb(MANIFEST, {
      "package.json": { data: JSON.stringify({ name: APP, version: "1.0.0", type: "module" }) },
      "server/index.js": { data: SERVER },
      ...sdkNodeModules(join(root, "build")),
    });
    bundlePath = join(root, "notes.mcpb");
    writeFileSync(bundlePath, bundle);
    gw = await startGateway({ home, env: { HOME: ownerHome } });
  }, 90_000);

  afterAll(async () => {
    await gw?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("without consent it shows the review: the bundle's sha256, publisher, version, compatibility, signature state", async () => {
    const sha256 = createHash("sha256").update(readFileSync(bundlePath)).digest("hex");
    const shown = await cli(["apps", "add", bundlePath]);
    expect(shown.code, shown.stderr).toBe(1);
    expect(shown.stderr).toContain(`Source: .mcpb bundle ${bundlePath}`);
    expect(shown.stderr).toContain(`sha256 ${sha256}, ${statSync(bundlePath).size} bytes`);
    expect(shown.stderr).toContain(
      "Publisher (as the bundle states it, not proven): PersonalClaw Tests <tests@example.com>",
    );
    expect(shown.stderr).toContain("Compatibility: platforms: darwin, win32, linux; runtimes.node: >=18.0.0");
    expect(shown.stderr).toContain("Signature: unsigned");
    expect(shown.stderr).toContain('greeting (string): "hello", its default');
    expect(shown.stderr).toContain("node ./server/index.js --greeting=hello");
    expect(shown.stderr).toContain("NOTES_FILE=${DATA}/notes.jsonl");
    expect(shown.stderr).toContain("Reaches hosts (enforced): none: no network at all");
    expect(shown.stderr).toContain("consent_required");
    expect(existsSync(join(home, "apps", APP))).toBe(false);
  }, 120_000);

  it("a one-byte change to the bundle after the review is refused at install: the consent was to other bytes", async () => {
    const shown = await cli(["apps", "add", bundlePath]);
    const digest = /Consent digest: (sha256:[0-9a-f]{64})/.exec(shown.stderr)![1]!;
    const original = readFileSync(bundlePath);
    // One byte of the first entry's modification time in the central directory: the zip still reads, its bytes differ.
    const changed = Buffer.from(original);
    const central = changed.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    changed[central + 12] = changed[central + 12]! ^ 0x01;
    writeFileSync(bundlePath, changed);
    try {
      const refused = await cli(["apps", "add", bundlePath, "--consent", digest, "--json"]);
      expect(refused.code).not.toBe(0);
      const envelope = JSON.parse(refused.stdout.trim().split("\n").at(-1)!);
      expect(envelope.error.code).toBe("consent_required");
      expect(existsSync(join(home, "apps", APP))).toBe(false);
    } finally {
      writeFileSync(bundlePath, original);
    }
    // The same consent installs the bytes it was given for.
    const installed = await cli(["apps", "add", bundlePath, "--consent", digest]);
    expect(installed.code, installed.stderr).toBe(0);
    const uninstalled = await cli(["apps", "uninstall", APP, "--purge-data"]);
    expect(uninstalled.code, uninstalled.stderr).toBe(0);
  }, 300_000);

  it("a hostile bundle (an entry that climbs out) is refused by name and nothing is written", async () => {
    const hostile = join(root, "hostile.mcpb");
    const { zipSync } = await import("fflate");
    writeFileSync(
      hostile,
      Buffer.from(zipSync({ "manifest.json": Buffer.from("{}"), "../escape.js": Buffer.from("x") })),
    );
    const refused = await cli(["apps", "add", hostile, "--yes", "--json"]);
    const envelope = JSON.parse(refused.stdout.trim().split("\n").at(-1)!);
    expect(envelope.error.code).toBe("mcpb_entry_refused");
    const written = execFileSync("find", [root, "-name", "escape.js"], { encoding: "utf8" });
    expect(written).toBe("");
  });

  it("--yes installs it; an MCP client started from mcp.json lists and calls its tools, and its data lands in data/", async () => {
    const added = await cli(["apps", "add", bundlePath, "--yes"]);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain(`Installed ${APP} 1.0.0`);
    const appDir = join(home, "apps", APP);
    expect(existsSync(join(appDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json"))).toBe(true);
    expect(JSON.parse(readFileSync(join(appDir, "mcpb-bundle.json"), "utf8")).signature).toBe("unsigned");
    const { client } = await agentFromMcpJson(home, `${APP}:${APP}`, ownerHome);
    await allowEveryTool(gw, client, APP, APP);
    try {
      const tools = (await client.listTools()).tools.map((t: { name: string }) => t.name);
      expect(tools).toEqual(["remember", "recall"]);
      await client.callTool({ name: "remember", arguments: { text: "kept in data" } });
      const recalled = await client.callTool({ name: "recall", arguments: {} });
      expect((recalled.content as Array<{ text: string }>)[0]!.text).toContain("hello: ");
      expect((recalled.content as Array<{ text: string }>)[0]!.text).toContain("kept in data");
    } finally {
      await client.close();
    }
    expect(readFileSync(join(appDir, "data", "notes.jsonl"), "utf8")).toContain('"text":"kept in data"');
    // Its own files are read-only to it: nothing was written beside its code.
    expect(existsSync(join(appDir, "notes.jsonl"))).toBe(false);
  }, 300_000);

  it("adding the same bundle again answers app_exists and points at apps update", async () => {
    const again = await cli(["apps", "add", bundlePath, "--yes", "--json"]);
    const envelope = JSON.parse(again.stdout.trim().split("\n").at(-1)!);
    expect(envelope.error.code).toBe("app_exists");
    expect(envelope.error.message).toContain("apps update");
  });
});
