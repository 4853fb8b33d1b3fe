import { describe, expect, it } from "vitest";
import { validateManifest, type ValidateManifestOptions } from "./manifest";
import { referencedSecret, serverSecrets } from "./mcp-server-secrets";

const opts: ValidateManifestOptions = {
  reservedNames: new Set<string>(),
  fromNativeFolder: false,
  core: { version: "0.3.0", features: [] },
};

const KEY = { name: "API_KEY", why: "The service's key" };
const PLACEHOLDER_KEY = {
  name: "API_KEY",
  why: "The service's key",
  use: { origins: ["https://api.example.com"], header: "Authorization", format: "Bearer {value}" },
};

function app(server: Record<string, unknown>, secrets: unknown[] = [KEY], network: unknown = false) {
  return {
    name: "keyed",
    version: "1.0.0",
    permissions: { network },
    secrets,
    mcpServers: { keyed: { command: "node", args: ["server.js"], ...server } },
  };
}

describe("an MCP server holds a secret by reference, never by value", () => {
  it("a whole env value ${secret:NAME} naming a secret delivered as its value is accepted", () => {
    const env = { SERVICE_TOKEN: "${secret:API_KEY}", PLAIN: "x" };
    expect(validateManifest(app({ env }), opts).ok).toBe(true);
    expect(serverSecrets({ env })).toEqual([{ variable: "SERVICE_TOKEN", secret: "API_KEY" }]);
    expect(referencedSecret("${secret:API_KEY}x")).toBeNull();
  });

  it("refuses a reference that is undeclared, partial, in an argument, on a remote server or to a placeholder secret", () => {
    const refusals: Array<[unknown, string, string]> = [
      [app({ env: { T: "${secret:OTHER}" } }), "mcpServers.keyed.env.T", "does not declare"],
      [app({ env: { T: "Bearer ${secret:API_KEY}" } }), "mcpServers.keyed.env.T", "whole value"],
      [app({ args: ["--key=${secret:API_KEY}"] }), "mcpServers.keyed.args[0]", "never an argument"],
      [
        app({ env: { T: "${secret:API_KEY}" } }, [PLACEHOLDER_KEY], ["api.example.com"]),
        "mcpServers.keyed.env.T",
        "placeholder",
      ],
      [
        {
          ...app({}),
          mcpServers: { keyed: { transport: "http", url: "https://mcp.example.com", env: { T: "${secret:API_KEY}" } } },
        },
        "mcpServers.keyed.env.T",
        "only a stdio server",
      ],
    ];
    for (const [manifest, field, words] of refusals) {
      const r = validateManifest(manifest, opts);
      if (r.ok) throw new Error(`expected a refusal of ${field}`);
      expect(r.code).toBe("manifest_invalid");
      expect(r.field).toBe(field);
      expect(r.message).toContain(words);
    }
  });
});
