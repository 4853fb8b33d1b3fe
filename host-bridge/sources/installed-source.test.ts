import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registryFixture, startMcpRegistry, type McpRegistryStandIn } from "../../test/helpers/mcp-registry";
import { NPM_FIXTURES, startNpmRegistry, tarballFile, type NpmRegistryStandIn } from "../../test/helpers/npm-registry";
import { checkInstalledSources, type SourceCheckContext } from "./installed-source";

const MEMORY = "io.github.modelcontextprotocol/server-memory";
const PACKAGE = "@modelcontextprotocol/server-memory";
const app = (version: string) => ({ displayName: PACKAGE, version });

describe("what an installed app's package source offers now", () => {
  let npm: NpmRegistryStandIn;
  let mcp: McpRegistryStandIn;
  let appsDir: string;
  let ctx: SourceCheckContext;
  beforeAll(async () => {
    npm = await startNpmRegistry();
    mcp = await startMcpRegistry({ entries: [registryFixture("server-memory.json")] });
    appsDir = mkdtempSync(join(tmpdir(), "pc-installed-source-"));
    ctx = {
      appsDir,
      // Nothing may reach PyPI here: a check that asked it would fail to resolve.
      install: { npm_registry: npm.url, pypi_index: "http://127.0.0.1:9/simple/", mcp_registries: [mcp.url] },
    };
  });
  afterAll(async () => {
    await npm.close();
    await mcp.close();
    rmSync(appsDir, { recursive: true, force: true });
  });

  it("an npm app: the source's latest tag, newer only once the source publishes one, with the spec apps update takes", async () => {
    const review = { app: app("2025.8.4"), npmClosure: { registry: npm.url, root: `${PACKAGE}@2025.8.4` } };
    const [current] = await checkInstalledSources([{ name: "server-memory", review }], ctx);
    expect(current).toMatchObject({
      kind: "npm",
      installed: "2025.8.4",
      latest: "2025.8.4",
      outdated: false,
      update: null,
    });
    const packument = JSON.parse(
      readFileSync(join(NPM_FIXTURES, "packuments", "@modelcontextprotocol__server-memory.json"), "utf8"),
    );
    const { dist: _dist, ...meta } = packument.versions["2025.8.4"];
    npm.publish(
      { ...meta, version: "2025.10.1" },
      readFileSync(join(NPM_FIXTURES, "tarballs", tarballFile(PACKAGE, "2025.8.4"))),
    );
    const [next] = await checkInstalledSources([{ name: "server-memory", review }], ctx);
    expect(next).toMatchObject({
      latest: "2025.10.1",
      outdated: true,
      update: `npm:${PACKAGE}@2025.10.1`,
      error: null,
    });
  });

  it("a registry app: the entry's latest version on the owner's registries, as an exact registry: spec", async () => {
    const review = {
      app: app("2025.8.4"),
      npmClosure: { registry: npm.url, root: `${PACKAGE}@2025.8.4` },
      mcpRegistryEntry: { registry: mcp.url, name: MEMORY, version: "2025.8.4" },
    };
    const next = registryFixture("server-memory.json");
    next.server.version = "2025.9.0";
    mcp.publish(next);
    const [check] = await checkInstalledSources([{ name: "server-memory", review }], ctx);
    expect(check).toEqual({
      app: "server-memory",
      kind: "registry",
      from: mcp.url,
      package: MEMORY,
      installed: "2025.8.4",
      latest: "2025.9.0",
      outdated: true,
      update: `registry:${MEMORY}@2025.9.0`,
      error: null,
    });
  });

  it("a source that cannot answer says so in place with its code; the others are still checked", async () => {
    const missing = { app: app("1.0.0"), npmClosure: { registry: npm.url, root: "pc-no-such-package@1.0.0" } };
    const bundle = { app: app("0.1.0"), mcpbBundle: { source: "https://example.com/x.mcpb", version: "0.1.0" } };
    const checks = await checkInstalledSources(
      [
        { name: "missing", review: missing },
        { name: "bundled", review: bundle },
      ],
      ctx,
    );
    expect(checks[0]).toMatchObject({
      app: "missing",
      latest: null,
      outdated: false,
      error: { code: "npm_package_not_found" },
    });
    // A bundle names no newer version: nothing is fetched for it.
    expect(checks[1]).toMatchObject({
      app: "bundled",
      kind: "mcpb",
      latest: null,
      outdated: false,
      update: null,
      error: null,
    });
  });

  it("an app from no package source is left out, and a pypi-closure.json that is not what the consented review shows is not believed", async () => {
    mkdirSync(join(appsDir, "lender"), { recursive: true });
    // A hand-made app lending itself a PyPI project's name to be offered someone else's "update".
    writeFileSync(
      join(appsDir, "lender", "pypi-closure.json"),
      JSON.stringify({ source: "pypi:mcp-server-fetch==1.0.0", index: "https://pypi.org/simple/" }),
    );
    const checks = await checkInstalledSources(
      [
        { name: "plain", review: { app: { displayName: "Plain", version: "1.0.0" } } },
        { name: "lender", review: { app: { displayName: "Lender", version: "2.0.0" } } },
      ],
      ctx,
    );
    expect(checks).toEqual([]);
  });
});
