// `personalclaw apps add npm:` end to end (issue 36): the real `personalclaw start`, the real CLI,
// a local npm registry stand-in serving the vendored, published tarballs of
// @modelcontextprotocol/server-memory and its closure on a loopback address configured as
// install.npm_registry, the confined installer (bubblewrap, npm ci, no scripts), and the
// official MCP SDK client started from mcp.json as an agent starts it.
//
// Homes live under /var/tmp, not /tmp: the sandbox gives every child a private /tmp.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, startGateway, type RunningGateway } from "./helpers/gateway";
import { NPM_FIXTURES, startNpmRegistry, tarballFile, type NpmRegistryStandIn } from "./helpers/npm-registry";
// @ts-expect-error a bundled ES module without types
import { Client, StdioClientTransport } from "./fixtures/mcp-client-sdk.mjs";
import { allowEveryTool } from "./helpers/mcp-tool-policy";

const SPEC = "npm:@modelcontextprotocol/server-memory@2025.8.4";
const NEXT_SPEC = "npm:@modelcontextprotocol/server-memory@2025.8.5";
const APP = "server-memory";
const MEMORY_ENV = "MEMORY_FILE_PATH=${DATA}/memory.jsonl";

/** A tarball of `files` under npm's `package/` folder, made with tar as npm pack makes one. */
function packTarball(dir: string, files: Record<string, string>): Buffer {
  rmSync(dir, { recursive: true, force: true });
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, "package", path, ".."), { recursive: true });
    writeFileSync(join(dir, "package", path), text);
  }
  execFileSync("tar", ["-czf", join(dir, "out.tgz"), "-C", dir, "package"]);
  return readFileSync(join(dir, "out.tgz"));
}

/**
 * Publishes server-memory 2025.8.5 on the stand-in: the published 2025.8.4 code, which now also
 * depends on pc-probe-native@1.0.0, a package with a postinstall script (never run by the
 * installer). Its closure differs from the installed one in the root's version, one added package
 * and one new install script.
 */
function publishNextRelease(registry: NpmRegistryStandIn, workDir: string): void {
  const probe = {
    name: "pc-probe-native",
    version: "1.0.0",
    main: "index.js",
    scripts: { postinstall: "node -e \"require('fs').writeFileSync('ran-postinstall','')\"" },
  };
  registry.publish(
    probe,
    packTarball(join(workDir, "probe"), {
      "package.json": JSON.stringify(probe),
      "index.js": "module.exports = 1;\n",
    }),
  );
  const released = join(workDir, "server-memory");
  rmSync(released, { recursive: true, force: true });
  mkdirSync(released, { recursive: true });
  const published = join(NPM_FIXTURES, "tarballs", tarballFile("@modelcontextprotocol/server-memory", "2025.8.4"));
  execFileSync("tar", ["-xzf", published, "-C", released]);
  const manifestPath = join(released, "package", "package.json");
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
  manifest.version = "2025.8.5";
  manifest.dependencies = { ...manifest.dependencies, "pc-probe-native": "1.0.0" };
  writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));
  execFileSync("tar", ["-czf", join(released, "out.tgz"), "-C", released, "package"]);
  const packument = JSON.parse(
    readFileSync(join(NPM_FIXTURES, "packuments", "@modelcontextprotocol__server-memory.json"), "utf8"),
  );
  const { dist: _dist, ...meta } = packument.versions["2025.8.4"];
  registry.publish(
    { ...meta, version: "2025.8.5", dependencies: manifest.dependencies },
    readFileSync(join(released, "out.tgz")),
  );
}

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
    await allowEveryTool(gw, client, APP, APP);
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
    expect(shown.stderr).toContain("Where it comes from: npm package @modelcontextprotocol/server-memory 2025.8.4\n");
    expect(shown.stderr).toContain(`  Publisher: the npm scope @modelcontextprotocol, as ${registry.url} serves it`);
    expect(shown.stderr).toMatch(
      / {2}Pinned: 15 npm packages, [0-9.]+ KiB of tarballs, each by its sha512 integrity\n/,
    );
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
  }, 90_000);

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

  it("apps update from a new release shows the closure's diff and changes nothing without consent", async () => {
    publishNextRelease(registry, join(root, "release"));
    const shown = await cli(["apps", "update", APP, NEXT_SPEC, "--env", MEMORY_ENV]);
    expect(shown.code, shown.stderr).toBe(1);
    expect(shown.stderr).toContain(`Source: ${NEXT_SPEC} from ${registry.url}`);
    expect(shown.stderr).toContain(`changed npm closure: ${SPEC} -> ${NEXT_SPEC}`);
    expect(shown.stderr).toContain("added: pc-probe-native@1.0.0");
    expect(shown.stderr).toContain("other versions: @modelcontextprotocol/server-memory 2025.8.4 -> 2025.8.5");
    expect(shown.stderr).toContain("new install scripts or native build files (never run): pc-probe-native@1.0.0");
    expect(shown.stderr).toContain("consent_required");
    // The retry names the source, not the generated folder (which is gone by then).
    expect(shown.stderr).toMatch(/apps update server-memory npm:@modelcontextprotocol\/server-memory@2025\.8\.5 --env/);
    const listed = await cli(["apps", "list", "--json"]);
    const app = JSON.parse(listed.stdout).apps.find((a: { name: string }) => a.name === APP);
    expect(app.version).toBe("2025.8.4");
  }, 120_000);

  it("with consent the update installs the new closure confined, without its install script, and the server serves the kept data", async () => {
    const updated = await cli(["apps", "update", APP, NEXT_SPEC, "--env", MEMORY_ENV, "--yes"]);
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.stderr).toContain("npm closure: done");
    expect(updated.stdout).toContain(`Updated ${APP} to 2025.8.5`);
    const appDir = join(home, "apps", APP);
    const installedRoot = JSON.parse(
      readFileSync(join(appDir, "node_modules", "@modelcontextprotocol", "server-memory", "package.json"), "utf8"),
    );
    expect(installedRoot.version).toBe("2025.8.5");
    expect(existsSync(join(appDir, "node_modules", "pc-probe-native", "index.js"))).toBe(true);
    expect(existsSync(join(appDir, "node_modules", "pc-probe-native", "ran-postinstall"))).toBe(false);
    const client = await connect();
    try {
      const tools = (await client.listTools()).tools.map((t: { name: string }) => t.name);
      expect(tools).toEqual(expect.arrayContaining(["create_entities", "read_graph", "search_nodes"]));
      const result = await client.callTool({ name: "read_graph", arguments: {} });
      expect((result.content as Array<{ text: string }>)[0]!.text).toContain("kept across restarts");
    } finally {
      await client.close();
    }
  }, 300_000);
});
