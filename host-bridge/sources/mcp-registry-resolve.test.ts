import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  registryFixture,
  startMcpRegistry,
  type McpRegistryStandIn,
  type RegistryEntry,
} from "../../test/helpers/mcp-registry";
import { choosePackage, entryUrl, parseRegistrySpec, resolveRegistryEntry } from "./mcp-registry-resolve";
import { refusal, thrown } from "../../test/helpers/refusals";

const MEMORY = "io.github.modelcontextprotocol/server-memory";

/** The server-memory entry under another name, with its packages replaced. */
function entryWith(name: string, packages: unknown[], extra: Record<string, unknown> = {}): RegistryEntry {
  const entry = registryFixture("server-memory.json");
  return { ...entry, server: { ...entry.server, name, packages, ...extra } };
}

describe("resolving registry:<name>[@<version>] through the owner's MCP Registries", () => {
  let first: McpRegistryStandIn;
  let second: McpRegistryStandIn;
  beforeAll(async () => {
    first = await startMcpRegistry();
    second = await startMcpRegistry({ entries: [registryFixture("server-memory.json")] });
  });
  afterAll(async () => {
    await first.close();
    await second.close();
  });

  it("asks each registry in order with the v0.1 API, the name URL-encoded as one segment, and the first that has it answers", async () => {
    const resolved = await resolveRegistryEntry({ registries: [first.url, second.url], name: MEMORY, version: null });
    expect(resolved.registry).toBe(second.url);
    expect(resolved.server.name).toBe(MEMORY);
    expect(resolved.server.version).toBe("2025.8.4");
    const path = "/v0.1/servers/io.github.modelcontextprotocol%2Fserver-memory/versions/latest";
    expect(first.requests).toContain(path);
    expect(second.requests).toContain(path);
    expect(choosePackage(resolved.server)).toMatchObject({
      kind: "npm",
      name: "@modelcontextprotocol/server-memory",
      version: "2025.8.4",
    });
  });

  it("an exact version is asked for by that version, and a base URL with a path of its own keeps it", () => {
    expect(entryUrl("https://r.example/mcp", MEMORY, "1.0.0+build.7")).toBe(
      "https://r.example/mcp/v0.1/servers/io.github.modelcontextprotocol%2Fserver-memory/versions/1.0.0%2Bbuild.7",
    );
  });

  it("an unknown name is mcp_registry_entry_not_found, naming every registry asked", async () => {
    const error = await refusal(
      resolveRegistryEntry({ registries: [first.url, second.url], name: "io.github.nobody/none", version: null }),
    );
    expect(error.code).toBe("mcp_registry_entry_not_found");
    expect(error.message).toContain(first.url);
    expect(error.message).toContain(second.url);
  });

  it("a version the registry does not have is mcp_registry_entry_not_found, never another version", async () => {
    const error = await refusal(resolveRegistryEntry({ registries: [second.url], name: MEMORY, version: "9.9.9" }));
    expect(error.code).toBe("mcp_registry_entry_not_found");
    expect(error.message).toContain("9.9.9");
  });

  it("a registry that fails (500) stops the resolution: a later registry never answers in its place", async () => {
    const failing = await startMcpRegistry();
    failing.answerWith(entryUrl(failing.url, MEMORY, null).slice(failing.url.length), 500, "{}");
    const asked = second.requests.length;
    try {
      const error = await refusal(
        resolveRegistryEntry({ registries: [failing.url, second.url], name: MEMORY, version: null }),
      );
      expect(error.code).toBe("source_unreachable");
      expect(second.requests.length).toBe(asked);
    } finally {
      await failing.close();
    }
  });

  it("an answer that is not JSON, not an entry, or the entry of another name is mcp_registry_answer_invalid", async () => {
    const odd = await startMcpRegistry();
    const path = (name: string) => entryUrl(odd.url, name, null).slice(odd.url.length);
    odd.answerWith(path("a.b/garbage"), 200, "<html>not json</html>");
    odd.answerWith(path("a.b/shape"), 200, JSON.stringify({ servers: [] }));
    odd.answerWith(path("a.b/other"), 200, JSON.stringify(registryFixture("server-memory.json")));
    try {
      for (const name of ["a.b/garbage", "a.b/shape", "a.b/other"]) {
        const error = await refusal(resolveRegistryEntry({ registries: [odd.url], name, version: null }));
        expect(error.code, name).toBe("mcp_registry_answer_invalid");
        expect(error.message).toContain(odd.url);
      }
    } finally {
      await odd.close();
    }
  });

  it("an answer larger than any entry is cut off and refused, never parsed", async () => {
    const huge = await startMcpRegistry();
    huge.answerWith(entryUrl(huge.url, MEMORY, null).slice(huge.url.length), 200, Buffer.alloc(3 * 1024 * 1024, 32));
    try {
      const error = await refusal(resolveRegistryEntry({ registries: [huge.url], name: MEMORY, version: null }));
      expect(error.code).toBe("source_unreachable");
      expect(error.message).toMatch(/larger than \d+ bytes/);
    } finally {
      await huge.close();
    }
  });

  it("a registry named by a name that resolves to this machine is refused: a local address only as the owner's literal", async () => {
    const port = new URL(second.url).port;
    const error = await refusal(
      resolveRegistryEntry({
        registries: [`http://registry.test:${port}`],
        name: MEMORY,
        version: null,
        resolve: async () => ["127.0.0.2"],
      }),
    );
    expect(error.code).toBe("source_address_refused");
  });

  it("an entry the registry marks deleted is refused, whatever package it names", async () => {
    const entry = registryFixture("server-memory.json");
    entry._meta = { "io.modelcontextprotocol.registry/official": { status: "deleted", isLatest: true } };
    const moderated = await startMcpRegistry({ entries: [entry] });
    try {
      const error = await refusal(resolveRegistryEntry({ registries: [moderated.url], name: MEMORY, version: null }));
      expect(error.code).toBe("mcp_registry_entry_unusable");
      expect(error.message).toContain("deleted");
    } finally {
      await moderated.close();
    }
  });
});

describe("choosing the package an entry names", () => {
  const server = (packages: unknown[], extra: Record<string, unknown> = {}) =>
    entryWith("io.github.someone/server", packages, extra).server as never;
  const npm = (version: string) => ({
    registryType: "npm",
    identifier: "@someone/server",
    version,
    transport: { type: "stdio" },
  });

  it("a range instead of one exact version is mcp_registry_version_not_exact, naming the range", () => {
    for (const range of ["^1.2.3", "~1.2.3", ">=1.0.0", "1.x", "latest"]) {
      const error = thrown(() => choosePackage(server([npm(range)])));
      expect(error.code, range).toBe("mcp_registry_version_not_exact");
      expect(error.message).toContain(range);
    }
    const pypi = { registryType: "pypi", identifier: "some-server", version: ">=0.1", transport: { type: "stdio" } };
    expect(thrown(() => choosePackage(server([pypi]))).code).toBe("mcp_registry_version_not_exact");
  });

  it("the first supported package wins: an unsupported one before it is passed over, a PyPI one after it is not taken", () => {
    const oci = { registryType: "oci", identifier: "docker.io/someone/server:1.0.0", transport: { type: "stdio" } };
    const pypi = { registryType: "pypi", identifier: "some-server", version: "0.3.1", transport: { type: "stdio" } };
    expect(choosePackage(server([oci, pypi, npm("1.0.0")]))).toMatchObject({ kind: "pypi", name: "some-server" });
    // An npm package served over HTTP is not a stdio server this gateway runs.
    const http = { ...npm("1.0.0"), transport: { type: "streamable-http", url: "http://localhost:8080/mcp" } };
    expect(choosePackage(server([http, npm("2.0.0")]))).toMatchObject({ kind: "npm", version: "2.0.0" });
  });

  it("an entry with only package types this gateway does not install is mcp_registry_no_supported_package, listing them", () => {
    const oci = { registryType: "oci", identifier: "docker.io/someone/server:1.0.0", transport: { type: "stdio" } };
    const nuget = {
      registryType: "nuget",
      identifier: "Someone.Server",
      version: "1.0.0",
      transport: { type: "stdio" },
    };
    const error = thrown(() =>
      choosePackage(server([oci, nuget], { remotes: [{ type: "streamable-http", url: "https://mcp.example.com" }] })),
    );
    expect(error.code).toBe("mcp_registry_no_supported_package");
    expect(error.message).toContain("oci over stdio");
    expect(error.message).toContain("nuget over stdio");
    expect(error.message).toContain("a remote server");
    expect(thrown(() => choosePackage(server([]))).code).toBe("mcp_registry_no_supported_package");
  });

  it("an .mcpb package listed first is chosen, pinned by its fileSha256; one without a hash or URL is refused", () => {
    const bundle = {
      registryType: "mcpb",
      identifier: "https://github.com/someone/server/releases/download/v1.0.0/server.mcpb",
      version: "1.0.0",
      fileSha256: "fe333e598595000ae021bd27117db32ec69af6987f507ba7a63c90638ff633ce",
      transport: { type: "stdio" },
    };
    expect(choosePackage(server([bundle, npm("1.0.0")]))).toMatchObject({
      kind: "mcpb",
      url: bundle.identifier,
      sha256: bundle.fileSha256,
    });
    const { fileSha256: _hash, ...unpinned } = bundle;
    for (const bad of [unpinned, { ...bundle, fileSha256: "abc" }, { ...bundle, identifier: "/etc/server.mcpb" }]) {
      const error = thrown(() => choosePackage(server([bad])));
      expect(error.code).toBe("mcp_registry_entry_unusable");
    }
  });

  it("a package identifier that is not a name of its registry is refused", () => {
    const error = thrown(() => choosePackage(server([{ ...npm("1.0.0"), identifier: "../../etc" }])));
    expect(error.code).toBe("mcp_registry_entry_unusable");
  });
});

describe("reading registry:<name>[@<version>]", () => {
  it("takes a server name with an optional exact version and refuses a range, a tag or a bad name", () => {
    expect(parseRegistrySpec(MEMORY)).toEqual({ name: MEMORY, version: null });
    expect(parseRegistrySpec(`${MEMORY}@2025.8.4`)).toEqual({ name: MEMORY, version: "2025.8.4" });
    for (const bad of [`${MEMORY}@^1.0.0`, `${MEMORY}@latest`, `${MEMORY}@1.x`, `${MEMORY}@`, "no-slash", "a/b/c"])
      expect(parseRegistrySpec(bad), bad).toHaveProperty("refusal");
  });
});
