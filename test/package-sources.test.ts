// The dashboard's way to package sources, over REST against the real gateway (issue 36): a spec
// staged through the bridge into the quarantine as `apps add` generates it, whose review and
// digest are the ones `apps add` and `apps preview` show, installed by the ordinary install
// route; the Store's listing of a configured MCP Registry with its provenance; the update check
// against the owner's npm source, which reports a newer release and installs nothing. Local
// stand-ins for the npm registry and the MCP Registry on loopback addresses the owner configured.
//
// Homes live under /var/tmp, not /tmp: the sandbox gives every child a private /tmp.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot, runCli, startGateway, type RunningGateway } from "./helpers/gateway";
import { NPM_FIXTURES, startNpmRegistry, tarballFile, type NpmRegistryStandIn } from "./helpers/npm-registry";
import { registryFixture, startMcpRegistry, type McpRegistryStandIn } from "./helpers/mcp-registry";
import { appTokenOf, install, waitForRow } from "./helpers/backends";

const PACKAGE = "@modelcontextprotocol/server-memory";
const SPEC = `npm:${PACKAGE}@2025.8.4`;
const APP = "server-memory";
const MEMORY_ENV = "MEMORY_FILE_PATH=${DATA}/memory.jsonl";
const json = { "content-type": "application/json" };

/** Publishes `version` of server-memory on the stand-in (the published metadata and bytes of 2025.8.4): a newer release. */
function publishRelease(registry: NpmRegistryStandIn, version: string): void {
  const packument = JSON.parse(
    readFileSync(join(NPM_FIXTURES, "packuments", "@modelcontextprotocol__server-memory.json"), "utf8"),
  );
  const { dist: _dist, ...meta } = packument.versions["2025.8.4"];
  registry.publish(
    { ...meta, version },
    readFileSync(join(NPM_FIXTURES, "tarballs", tarballFile(PACKAGE, "2025.8.4"))),
  );
}

describe("package sources from the dashboard's routes: stage, review, install, Store, update check", () => {
  let root: string;
  let ownerHome: string;
  let home: string;
  let gw: RunningGateway;
  let npm: NpmRegistryStandIn;
  let mcp: McpRegistryStandIn;
  const cli = (args: string[], timeoutMs = 180_000) =>
    runCli([...args, "--home", home], { HOME: ownerHome }, timeoutMs);
  const post = (path: string, body: unknown) =>
    gw.fetch(path, { method: "POST", headers: json, body: JSON.stringify(body) });
  const staged = () =>
    existsSync(join(home, "apps", ".quarantine", "sources"))
      ? readdirSync(join(home, "apps", ".quarantine", "sources"))
      : [];

  beforeAll(async () => {
    root = mkdtempSync("/var/tmp/pc-package-sources-");
    ownerHome = join(root, "owner");
    home = join(ownerHome, ".personalclaw");
    mkdirSync(home, { recursive: true });
    npm = await startNpmRegistry();
    mcp = await startMcpRegistry({ entries: [registryFixture("server-memory.json")] });
    // The owner names both stand-ins' loopback addresses: the one way a local address is reached.
    writeFileSync(
      join(home, "config.json"),
      JSON.stringify({ install: { npm_registry: npm.url, mcp_registries: [mcp.url] } }),
    );
    gw = await startGateway({ home, env: { HOME: ownerHome } });
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    await npm?.close();
    await mcp?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("stage generates the app as apps add does: the same review and consent digest as apps add and apps preview, and nothing installed", async () => {
    const response = await post("/api/sources/stage", { spec: SPEC, env: [MEMORY_ENV] });
    expect(response.status).toBe(200);
    const answer = await response.json();
    expect(answer.name).toBe(APP);
    expect(answer.installed).toBe(false);
    expect(answer.review.npmClosure.source).toBe(SPEC);
    expect(answer.review.npmClosure.registry).toBe(npm.url);
    expect(answer.review.mcpServers[0].env.MEMORY_FILE_PATH).toBe("${DATA}/memory.jsonl");
    expect(answer.source.startsWith(join(home, "apps", ".quarantine", "sources", `${APP}-`))).toBe(true);
    // apps preview of the staged folder: the same digest.
    const previewed = await cli(["apps", "preview", answer.source, "--json"]);
    expect(previewed.code, previewed.stderr).toBe(0);
    expect(JSON.parse(previewed.stdout).digest).toBe(answer.digest);
    // apps add with the same choices asks consent to the same digest (and leaves the staged folder alone).
    const added = await cli(["apps", "add", SPEC, "--env", MEMORY_ENV, "--json"]);
    const envelope = JSON.parse(added.stdout.trim().split("\n").at(-1)!);
    expect(envelope.error.code).toBe("consent_required");
    expect(envelope.error.message).toContain(`--consent ${answer.digest}`);
    expect(existsSync(answer.source)).toBe(true);
    expect(existsSync(join(home, "apps", APP))).toBe(false);
  }, 300_000);

  it("the staged folder installs through the ordinary install route with the review's digest as consent", async () => {
    const stagedAnswer = await (await post("/api/sources/stage", { spec: SPEC, env: [MEMORY_ENV] })).json();
    const refused = await post("/api/apps", { source: stagedAnswer.source, consent: "0".repeat(64) });
    expect(refused.status).toBe(409);
    expect(existsSync(join(home, "apps", APP))).toBe(false);
    const installed = await post("/api/apps", { source: stagedAnswer.source, consent: stagedAnswer.digest });
    expect(installed.status, await installed.clone().text()).toBe(200);
    expect((await installed.json()).app.name).toBe(APP);
    expect(existsSync(join(home, "apps", APP, "node_modules", PACKAGE, "package.json"))).toBe(true);
    // Staged again while installed: previewed as its update, which changes nothing.
    const again = await (await post("/api/sources/stage", { spec: SPEC, env: [MEMORY_ENV] })).json();
    expect(again.installed).toBe(true);
    expect(again.consentNeeded).toBe(false);
    expect(again.changes).toEqual([]);
  }, 300_000);

  it("the Store lists the configured registry's entries with their provenance, the installed one marked", async () => {
    const response = await gw.fetch("/api/sources/registry");
    expect(response.status).toBe(200);
    const listing = await response.json();
    expect(listing.registries).toEqual([{ url: mcp.url, official: false }]);
    expect(listing.registry).toBe(mcp.url);
    const entry = listing.entries.find(
      (e: { name: string }) => e.name === "io.github.modelcontextprotocol/server-memory",
    );
    // The entry's _meta calls it official-registry material; only the registry's own URL could make it official.
    expect(entry).toMatchObject({
      registry: mcp.url,
      official: false,
      version: "2025.8.4",
      spec: "registry:io.github.modelcontextprotocol/server-memory",
      installed: { app: APP, version: "2025.8.4" },
    });
    expect(entry.packages).toEqual([{ registryType: "npm", identifier: PACKAGE, version: "2025.8.4" }]);
    expect(mcp.requests.at(-1)).toMatch(/^\/v0\.1\/servers\?version=latest&limit=\d+$/);
    // Add from the entry: its spec stages through the same route, its provenance in the review, as the installed app's update.
    const staged = await (await post("/api/sources/stage", { spec: entry.spec, env: [MEMORY_ENV] })).json();
    expect(staged.review.mcpRegistryEntry).toMatchObject({ registry: mcp.url, official: false, name: entry.name });
    expect(staged).toMatchObject({ name: APP, installed: true });
    const searched = await (await gw.fetch("/api/sources/registry?search=nothing-like-it")).json();
    expect(searched.entries).toEqual([]);
    expect(mcp.requests.at(-1)).toContain("search=nothing-like-it");
  });

  it("the Store asks no registry the owner did not configure", async () => {
    const before = mcp.requests.length;
    const response = await gw.fetch(`/api/sources/registry?registry=${encodeURIComponent("http://127.0.0.1:9/")}`);
    expect(response.status).toBe(400);
    expect((await response.json()).error.code).toBe("mcp_registry_not_configured");
    expect(mcp.requests.length).toBe(before);
  });

  it("the update check reports a newer release the npm source published, and installs nothing", async () => {
    const current = await (await gw.fetch("/api/sources/outdated")).json();
    expect(current.apps).toEqual([
      expect.objectContaining({
        app: APP,
        kind: "npm",
        package: PACKAGE,
        installed: "2025.8.4",
        latest: "2025.8.4",
        outdated: false,
        update: null,
        error: null,
      }),
    ]);
    publishRelease(npm, "2025.8.6");
    const response = await gw.fetch(`/api/sources/outdated?app=${APP}`);
    expect(response.status).toBe(200);
    expect((await response.json()).apps).toEqual([
      {
        app: APP,
        kind: "npm",
        from: npm.url,
        package: PACKAGE,
        installed: "2025.8.4",
        latest: "2025.8.6",
        outdated: true,
        update: `npm:${PACKAGE}@2025.8.6`,
        error: null,
      },
    ]);
    const listed = await cli(["apps", "outdated", "--json"]);
    expect(listed.code, listed.stderr + listed.stdout).toBe(0);
    expect(JSON.parse(listed.stdout).apps[0]).toMatchObject({ app: APP, latest: "2025.8.6", outdated: true });
    const text = await cli(["apps", "outdated"]);
    expect(text.stdout).toContain(`update available:`);
    expect(text.stdout).toContain(`apps update ${APP} npm:${PACKAGE}@2025.8.6`);
    // Nothing was installed by asking.
    const row = await (await gw.fetch(`/api/apps/${APP}`)).json();
    expect(row.version).toBe("2025.8.4");
    const unknown = await gw.fetch("/api/sources/outdated?app=no-such-app");
    expect(unknown.status).toBe(404);
  }, 120_000);

  it("a spec naming a local address the owner did not write is refused, and nothing is generated", async () => {
    const before = staged();
    // localhost resolves to this machine; only an address the owner configured as a source is reached.
    for (const [spec, code] of [
      ["https://localhost:9/bundle.mcpb", "source_address_refused"],
      [`http://user:pw@${new URL(npm.url).host}/bundle.mcpb`, "source_spec_invalid"],
      ["bundle.mcpb", "source_spec_invalid"],
      ["git+https://example.com/x.git", "source_spec_invalid"],
    ]) {
      const response = await post("/api/sources/stage", { spec });
      expect(response.status, spec).toBe(code === "source_address_refused" ? 403 : 400);
      expect((await response.json()).error.code, spec).toBe(code);
    }
    // An entry of the owner's registry naming a bundle at a local address the owner never wrote.
    const planted = registryFixture("server-memory.json");
    planted.server.name = "io.github.someone/planted";
    planted.server.packages = [
      { registryType: "mcpb", identifier: "http://127.0.0.9:9/planted.mcpb", fileSha256: "0".repeat(64) },
    ];
    mcp.publish(planted);
    const fromEntry = await post("/api/sources/stage", { spec: "registry:io.github.someone/planted" });
    expect(fromEntry.status).toBe(403);
    expect((await fromEntry.json()).error.code).toBe("source_address_refused");
    const refusedChoice = await post("/api/sources/stage", { spec: SPEC, env: ["not an assignment"] });
    expect(refusedChoice.status).toBe(400);
    expect((await refusedChoice.json()).error.code).toBe("bad_request");
    expect(staged()).toEqual(before);
    const rows = (await (await gw.fetch("/api/security/events?kind=app_preview_refused&limit=50")).json()).events;
    expect(rows.some((r: { detail: { code: string } }) => r.detail.code === "source_address_refused")).toBe(true);
    // A login written in a refused URL is not kept in the log.
    expect(JSON.stringify(rows)).not.toContain("user:pw");
    expect(rows.some((r: { subject: string }) => r.subject.includes(new URL(npm.url).host))).toBe(true);
  }, 60_000);

  it("an app token is refused every package-source route", async () => {
    await install(home, join(repoRoot, "apps", "fixtures", "node-notes"), { HOME: ownerHome });
    expect((await waitForRow(gw, "node-notes", (row) => row.healthy))?.healthy).toBe(true);
    const token = await appTokenOf(gw, "node-notes");
    const asApp = { authorization: `Bearer ${token}` };
    for (const [method, path, body] of [
      ["POST", "/api/sources/stage", JSON.stringify({ spec: SPEC })],
      ["GET", "/api/sources/registry", undefined],
      ["GET", "/api/sources/outdated", undefined],
    ] as const) {
      const response = await gw.fetch(path, { method, body, headers: body ? { ...json, ...asApp } : asApp });
      expect(response.status, `${method} ${path}`).toBe(403);
      expect((await response.json()).error.code).toBe("app_not_permitted");
    }
  }, 120_000);
});
