// A bundle that points the agent (a remote MCP server's URL) or its broker (a grant's address
// literal) at an address no app may reach is refused at preview with manifest_address_refused,
// and such a server is never written to mcp.json. The bundles are real folders previewed by
// the real previewBundle; mcp.json is a real file.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AppManifest } from "../../kernel/contracts/manifest";
import { previewBundle } from "../install/preview";
import { McpJson } from "../mcp/mcp-json";

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function folder(): string {
  const made = mkdtempSync(path.join(tmpdir(), "pc-manifest-addr-"));
  folders.push(made);
  return made;
}

function manifest(network: string[] | false, mcpServers: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: "remote-tools",
    version: "1.0.0",
    description: "A bundle whose MCP server is remote.",
    permissions: { network },
    ...(Object.keys(mcpServers).length > 0 ? { mcpServers } : {}),
  };
}

async function preview(app: Record<string, unknown>) {
  const bundle = folder();
  writeFileSync(path.join(bundle, "app.json"), JSON.stringify(app));
  return previewBundle(bundle, {
    quarantineRoot: folder(),
    reservedNames: new Set(),
    core: { version: "0.3.0", features: [] },
  });
}

const remote = (url: string) => ({ tools: { transport: "http", url } });

describe("addresses a manifest names, at preview", () => {
  it("refuses the cloud metadata address as a grant literal and as a remote MCP server's URL (issue 33 item 7)", async () => {
    const both = await preview(
      manifest(["169.254.169.254:443"], remote("https://169.254.169.254/latest/meta-data/iam/")),
    );
    expect(both).toMatchObject({
      ok: false,
      code: "manifest_address_refused",
      field: "permissions.network[0]",
      detail: { address: "169.254.169.254", range: "linkLocal" },
    });
    expect(!both.ok && both.message).toContain("169.254.169.254");
  });

  it.each([
    ["a granted private address", ["10.0.0.5:443"], "https://10.0.0.5/mcp"],
    ["a granted loopback address", ["127.0.0.1:8443"], "https://127.0.0.1:8443/mcp"],
    ["loopback written in hex", ["127.0.0.1:443"], "https://0x7f000001/mcp"],
    ["IPv4-mapped loopback", ["[::ffff:127.0.0.1]:443"], "https://[::ffff:7f00:1]/mcp"],
    ["a unique-local IPv6 address", ["[fd00::2]:443"], "https://[fd00::2]/mcp"],
    ["IPv6 loopback", ["[::1]:443"], "https://[::1]/mcp"],
    ["localhost", ["localhost:443"], "https://localhost/mcp"],
    ["a name under .localhost", ["*.tools.localhost"], "https://api.tools.localhost/mcp"],
  ])("refuses a remote MCP server at %s, which the agent would dial itself", async (_what, network, url) => {
    const answer = await preview(manifest(network, remote(url)));
    expect(answer).toMatchObject({ ok: false, code: "manifest_address_refused", field: "mcpServers.tools.url" });
    expect(!answer.ok && answer.message).toContain("outside the app's sandbox and broker");
  });

  it.each([
    ["multicast", "224.0.0.1:443"],
    ["unspecified", "0.0.0.0:80"],
    ["IPv6 link-local", "[fe80::1]:443"],
    ["reserved", "240.0.0.1:443"],
  ])("refuses a grant literal in a range the broker never dials (%s)", async (_what, grant) => {
    expect(await preview(manifest([grant]))).toMatchObject({
      ok: false,
      code: "manifest_address_refused",
      field: "permissions.network[0]",
    });
  });

  it("keeps a grant literal of a local host the owner may consent to, and a remote server at a public name", async () => {
    expect(await preview(manifest(["127.0.0.2:8080", "192.168.1.20:443", "[fd00::9]:443"]))).toMatchObject({
      ok: true,
    });
    expect(
      await preview(manifest(["tools.example.com", "93.184.216.34:443"], remote("https://tools.example.com/mcp"))),
    ).toMatchObject({ ok: true });
    expect(await preview(manifest(["93.184.216.34:443"], remote("https://93.184.216.34/mcp")))).toMatchObject({
      ok: true,
    });
  });

  it("never writes such a server to mcp.json, even for an app installed before the preview refused it", async () => {
    const file = path.join(folder(), "mcp.json");
    const mcp = new McpJson(file, { cli: "/pkg/bin/personalclaw.mjs", home: "/h" });
    const installed = manifest(["169.254.169.254:443", "tools.example.com"], {
      ...remote("https://169.254.169.254/latest/meta-data/"),
      fine: { transport: "http", url: "https://tools.example.com/mcp" },
    }) as unknown as AppManifest;
    const result = await mcp.register("remote-tools", installed, []);
    expect(result.registered).toEqual(["remote-tools:fine"]);
    expect(result.skipped).toEqual([
      { key: "remote-tools:tools", reason: expect.stringContaining("169.254.169.254 is linkLocal") },
    ]);
    expect(Object.keys(JSON.parse(readFileSync(file, "utf8")).mcpServers)).toEqual(["remote-tools:fine"]);
  });
});
