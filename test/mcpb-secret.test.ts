// A sensitive user_config field of an .mcpb bundle becomes a write-only secret of the generated
// app (issue 36), end to end: the real `personalclaw start`, the real CLI, the confined install,
// `secrets set` and `secrets assign` as the owner runs them, and the official MCP SDK client
// started from mcp.json as an agent starts it. The server answers only a hash of what it holds;
// the value is looked for in every file under the test's root and in the security log.
//
// Homes live under /var/tmp, not /tmp: the sandbox gives every child a private /tmp.
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, runCliWithInput, startGateway, type RunningGateway } from "./helpers/gateway";
import { filesHolding } from "./helpers/home-files";
import { packMcpb, sdkNodeModules } from "./helpers/mcpb-pack";
import { agentFromMcpJson } from "./helpers/mcp-agent";

const APP = "pc-keyed";
const VALUE = `pc-mcpb-secret-${Math.random().toString(36).slice(2)}-value`;
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

// Answers the hash of what SERVICE_KEY holds ("unset" when nothing), and the region it was given.
const SERVER = `import { createHash } from "node:crypto";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const server = new Server({ name: "keyed", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  // Read-only and closed-world: a tool the owner's default policy allows without asking.
  tools: [{ name: "key_hash", description: "The hash of the key it holds", inputSchema: { type: "object", properties: {} },
    annotations: { readOnlyHint: true, openWorldHint: false } }],
}));
server.setRequestHandler(CallToolRequestSchema, async () => {
  const key = process.env.SERVICE_KEY;
  const hash = key === undefined ? "unset" : createHash("sha256").update(key).digest("hex");
  return { content: [{ type: "text", text: JSON.stringify({ hash, region: process.env.REGION ?? null }) }] };
});
await server.connect(new StdioServerTransport());
`;

const MANIFEST = {
  manifest_version: "0.3",
  name: APP,
  version: "1.0.0",
  description: "Calls a service with the owner's key",
  author: { name: "PersonalClaw Tests" },
  server: {
    type: "node",
    entry_point: "server/index.js",
    mcp_config: {
      command: "node",
      args: ["${__dirname}/server/index.js"],
      env: { SERVICE_KEY: "${user_config.api_key}", REGION: "${user_config.region}" },
    },
  },
  user_config: {
    api_key: {
      type: "string",
      title: "API key",
      description: "Your key for the service",
      sensitive: true,
      required: true,
    },
    region: { type: "string", title: "Region", description: "Where the service runs", required: true },
  },
};

describe("an .mcpb's sensitive user_config field becomes a secret its MCP server holds, stored only sealed", () => {
  let root: string;
  let ownerHome: string;
  let home: string;
  let bundlePath: string;
  let gw: RunningGateway;
  const cli = (args: string[], timeoutMs = 180_000) =>
    runCli([...args, "--home", home], { HOME: ownerHome }, timeoutMs);

  /** The tool's answer, from a client started from mcp.json as an agent starts it. */
  async function askServer(): Promise<{ hash: string; region: string | null }> {
    const { client, stderr } = await agentFromMcpJson(home, `${APP}:${APP}`, ownerHome);
    try {
      const answer = await client.callTool({ name: "key_hash", arguments: {} });
      return JSON.parse((answer.content as Array<{ text: string }>)[0]!.text);
    } catch (error) {
      throw new Error(`the server did not answer: ${String(error)}; its stderr: ${stderr()}`, { cause: error });
    } finally {
      await client.close();
      expect(stderr()).not.toContain(VALUE);
    }
  }

  beforeAll(async () => {
    root = mkdtempSync("/var/tmp/pc-mcpb-secret-");
    ownerHome = join(root, "owner");
    home = join(ownerHome, ".personalclaw");
    mkdirSync(home, { recursive: true });
    bundlePath = join(root, "keyed.mcpb");
    writeFileSync(
      bundlePath,
      packMcpb(MANIFEST, {
        "package.json": { data: JSON.stringify({ name: APP, version: "1.0.0", type: "module" }) },
        "server/index.js": { data: SERVER },
        ...sdkNodeModules(join(root, "build")),
      }),
    );
    gw = await startGateway({ home, env: { HOME: ownerHome } });
  }, 90_000);

  afterAll(async () => {
    await gw?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("the sensitive field given on the command line is refused, naming secrets set, and nothing is installed", async () => {
    const refused = await cli(["apps", "add", bundlePath, "--user-config", `api_key=${VALUE}`, "--yes", "--json"]);
    expect(refused.code).not.toBe(0);
    const envelope = JSON.parse(refused.stdout.trim().split("\n").at(-1)!);
    expect(envelope.error.code).toBe("mcpb_user_config_sensitive");
    expect(envelope.error.message).toContain("personalclaw secrets set API_KEY");
    expect(refused.stdout + refused.stderr).not.toContain(VALUE);
    const missing = await cli(["apps", "add", bundlePath, "--yes", "--json"]);
    expect(JSON.parse(missing.stdout.trim().split("\n").at(-1)!).error.code).toBe("mcpb_user_config_refused");
  });

  it("installs with the secret declared and shown in the review; the server holds nothing until the owner assigns it", async () => {
    const shown = await cli(["apps", "add", bundlePath, "--user-config", "region=eu-west"]);
    expect(shown.code, shown.stderr).toBe(1);
    expect(shown.stderr).toContain("SERVICE_KEY=${secret:API_KEY}");
    expect(shown.stderr).toContain("it holds the value of the secret API_KEY (in SERVICE_KEY)");
    expect(shown.stderr).toContain(
      "Secrets it asks for (given only if you assign one): API_KEY (API key: Your key for the service)",
    );
    expect(shown.stderr).toContain("api_key (string, sensitive, required): the secret API_KEY (in SERVICE_KEY)");
    expect(shown.stderr).toContain('region (string, required): "eu-west", given with --user-config');
    const added = await cli(["apps", "add", bundlePath, "--user-config", "region=eu-west", "--yes"]);
    expect(added.code, added.stderr).toBe(0);
    const manifest = JSON.parse(readFileSync(join(home, "apps", APP, "app.json"), "utf8"));
    expect(manifest.secrets).toEqual([{ name: "API_KEY", why: "API key: Your key for the service" }]);
    expect(await askServer()).toEqual({ hash: "unset", region: "eu-west" });
  }, 300_000);

  it("set and assigned, the server gets the value in its environment, and it is in no file and no log row", async () => {
    const set = await runCliWithInput(["secrets", "set", "API_KEY", "--home", home], `${VALUE}\n`, {
      HOME: ownerHome,
    });
    expect(set.code, set.stderr).toBe(0);
    const assigned = await cli(["secrets", "assign", "API_KEY", APP]);
    expect(assigned.code, assigned.stderr).toBe(0);
    expect(await askServer()).toEqual({ hash: sha256(VALUE), region: "eu-west" });
    // Sealed at rest: not one file under the root (the home, its logs, the bundle) holds the value in clear.
    expect(filesHolding(root, VALUE)).toEqual([]);
    const events = await cli(["security", "events", "--json"]);
    expect(events.code, events.stderr).toBe(0);
    expect(events.stdout).not.toContain(VALUE);
    expect(events.stdout).toContain("secret_assigned");
  }, 300_000);
});
