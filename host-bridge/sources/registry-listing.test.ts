import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OFFICIAL_MCP_REGISTRY } from "../../kernel/contracts/mcp-registry";
import { refusal } from "../../test/helpers/refusals";
import { registryFixture, startMcpRegistry, type McpRegistryStandIn } from "../../test/helpers/mcp-registry";
import { listingEntry, listRegistryEntries } from "./registry-listing";

const MEMORY = "io.github.modelcontextprotocol/server-memory";

describe("the Store's page of a configured MCP Registry", () => {
  let registry: McpRegistryStandIn;
  beforeAll(async () => {
    const deleted = registryFixture("server-memory.json");
    deleted.server.name = "io.github.someone/removed";
    deleted._meta = { "io.modelcontextprotocol.registry/official": { status: "deleted" } };
    const broken = registryFixture("server-memory.json");
    broken.server.name = "not a server name";
    registry = await startMcpRegistry({ entries: [registryFixture("server-memory.json"), deleted, broken] });
  });
  afterAll(async () => {
    await registry.close();
  });

  it("lists the latest entries with the registry they came from, never official for another registry, and the spec that adds each", async () => {
    const page = await listRegistryEntries({ registries: [registry.url] });
    expect(page.registries).toEqual([{ url: registry.url, official: false }]);
    expect(page.registry).toBe(registry.url);
    expect(page.nextCursor).toBeNull();
    // The entry marked deleted and the one that is not an entry are left out, not trusted and not fatal.
    expect(page.entries.map((e) => e.name)).toEqual([MEMORY]);
    expect(page.entries[0]).toMatchObject({
      registry: registry.url,
      official: false,
      version: "2025.8.4",
      spec: `registry:${MEMORY}`,
      packages: [{ registryType: "npm", identifier: "@modelcontextprotocol/server-memory", version: "2025.8.4" }],
    });
    expect(registry.requests.at(-1)).toBe("/v0.1/servers?version=latest&limit=30");
  });

  it("passes the owner's search and the registry's cursor on, and hands its next cursor back", async () => {
    registry.answerWith(
      "/v0.1/servers?version=latest&limit=30&search=mem&cursor=abc",
      200,
      JSON.stringify({ servers: [registryFixture("server-memory.json")], metadata: { nextCursor: "def", count: 1 } }),
    );
    const page = await listRegistryEntries({ registries: [registry.url], search: "mem", cursor: "abc" });
    expect(page.nextCursor).toBe("def");
    expect(page.entries).toHaveLength(1);
  });

  it("is official only for the official registry's own URL", () => {
    const entry = registryFixture("server-memory.json");
    expect(listingEntry(OFFICIAL_MCP_REGISTRY, entry)?.official).toBe(true);
    expect(listingEntry(`${OFFICIAL_MCP_REGISTRY}/`, entry)?.official).toBe(true);
    expect(listingEntry("https://registry.modelcontextprotocol.io.example.com", entry)?.official).toBe(false);
  });

  it("asks no registry the owner did not configure, and refuses an answer that is not the API's", async () => {
    const before = registry.requests.length;
    const refused = await refusal(listRegistryEntries({ registries: [registry.url], registry: "http://127.0.0.3:9" }));
    expect(refused.code).toBe("mcp_registry_not_configured");
    expect(registry.requests.length).toBe(before);
    // The same place written with a trailing slash is the configured one.
    expect((await listRegistryEntries({ registries: [registry.url], registry: `${registry.url}/` })).registry).toBe(
      registry.url,
    );
    registry.answerWith("/v0.1/servers?version=latest&limit=30&search=garbage", 200, "<html>");
    expect((await refusal(listRegistryEntries({ registries: [registry.url], search: "garbage" }))).code).toBe(
      "source_unreachable",
    );
  });

  it("answers an empty listing when no registry is configured", async () => {
    expect(await listRegistryEntries({ registries: [] })).toEqual({
      registries: [],
      registry: null,
      entries: [],
      nextCursor: null,
    });
  });
});
