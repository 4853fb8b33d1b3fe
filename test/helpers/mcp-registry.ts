// A small MCP Registry stand-in for tests that must not depend on a registry: it serves the
// entries of test/fixtures/mcp-registry/ (and any a test publishes) in the registry API v0.1's
// own shapes, on a loopback address a test configures in install.mcp_registries:
//   GET /v0.1/servers?search=<substring>&version=latest  -> {servers: [ServerResponse], metadata}
//   GET /v0.1/servers/<url-encoded name>/versions        -> every version of one server
//   GET /v0.1/servers/<url-encoded name>/versions/<v>    -> one ServerResponse (`latest` too)
// and 404 {"title":"Not Found","status":404,"detail":"Server not found"} for what it does not
// have. A test may make one path answer anything else (garbage, a huge body, a 500).
import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { repoRoot } from "./gateway";

export const MCP_REGISTRY_FIXTURES = join(repoRoot, "test", "fixtures", "mcp-registry");

/** A ServerResponse as the registry answers it; only `server.name` and `server.version` are read here. */
export interface RegistryEntry {
  server: { name: string; version: string } & Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

export interface McpRegistryStandIn {
  /** The registry's base URL, e.g. http://127.0.0.2:40123 */
  url: string;
  /** Every path asked for, in order. */
  requests: string[];
  /** Publishes one more entry (the newest version of its name). */
  publish(entry: RegistryEntry): void;
  /** Makes `path` (as requested, query included) answer `status` with `body`, whatever it holds. */
  answerWith(path: string, status: number, body: string | Buffer): void;
  close(): Promise<void>;
}

/** A fresh copy of a fixture entry (test/fixtures/mcp-registry/<file>). */
export function registryFixture(file: string): RegistryEntry {
  return JSON.parse(readFileSync(join(MCP_REGISTRY_FIXTURES, file), "utf8")) as RegistryEntry;
}

const NOT_FOUND = JSON.stringify({ title: "Not Found", status: 404, detail: "Server not found" });

function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

/** Starts the stand-in on `host` (loopback; 127.0.0.2 by default) at a free port, serving `entries`. */
export async function startMcpRegistry(
  opts: { host?: string; entries?: RegistryEntry[] } = {},
): Promise<McpRegistryStandIn> {
  const byName = new Map<string, RegistryEntry[]>();
  const overrides = new Map<string, { status: number; body: string | Buffer }>();
  const requests: string[] = [];
  const publish = (entry: RegistryEntry) =>
    byName.set(entry.server.name, [...(byName.get(entry.server.name) ?? []), structuredClone(entry)]);
  for (const entry of opts.entries ?? []) publish(entry);
  const latestOf = (name: string) => byName.get(name)?.at(-1);

  const server = http.createServer((req, res) => {
    const path = req.url ?? "/";
    requests.push(path);
    const override = overrides.get(path);
    if (override) {
      res.writeHead(override.status, { "content-type": "application/json" }).end(override.body);
      return;
    }
    const url = new URL(path, "http://stand-in");
    if (url.pathname === "/v0.1/servers") {
      const search = url.searchParams.get("search") ?? "";
      const latestOnly = url.searchParams.get("version") === "latest";
      const servers = [...byName.entries()]
        .filter(([name]) => name.includes(search))
        .flatMap(([name, versions]) => (latestOnly ? [latestOf(name)!] : versions));
      return json(res, 200, { servers, metadata: { count: servers.length } });
    }
    // The name is one URL-encoded segment (its slash as %2F), as the API documents it.
    const m = /^\/v0\.1\/servers\/([^/]+)\/versions(?:\/([^/]+))?$/.exec(url.pathname);
    const versions = m ? byName.get(decodeURIComponent(m[1]!)) : undefined;
    if (!m || !versions) {
      res.writeHead(404, { "content-type": "application/problem+json" }).end(NOT_FOUND);
      return;
    }
    if (m[2] === undefined) return json(res, 200, { servers: versions, metadata: { count: versions.length } });
    const version = decodeURIComponent(m[2]);
    const entry = version === "latest" ? versions.at(-1) : versions.find((e) => e.server.version === version);
    if (!entry) {
      res.writeHead(404, { "content-type": "application/problem+json" }).end(NOT_FOUND);
      return;
    }
    json(res, 200, entry);
  });
  await new Promise<void>((resolve) => server.listen(0, opts.host ?? "127.0.0.2", resolve));
  return {
    url: `http://${opts.host ?? "127.0.0.2"}:${(server.address() as AddressInfo).port}`,
    requests,
    publish,
    answerWith(path, status, body) {
      overrides.set(path, { status, body });
    },
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
