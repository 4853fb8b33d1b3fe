// Malformed requests against every route of the table, on a real gateway: bad JSON, a body
// that is not an object, the wrong Content-Type, an oversized body, a body where none is
// read, path parameters and queries no route expects. None may answer 500: each is refused
// with a stable code in the one envelope, and a body or query a route cannot read is a
// security-log row, counted like every refusal.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { errorCode, gatewayPerSuite, makeHome, repoRoot, type RunningGateway } from "./helpers/gateway";
import { install, waitForRow } from "./helpers/backends";
import { routeTable, type TableRow } from "./helpers/route-table";

const APP = "node-notes";

let ROUTES: ReadonlyArray<TableRow> = [];
beforeAll(async () => {
  ROUTES = (await routeTable()).ROUTES;
});

interface Variant {
  name: string;
  /** The path's parameters: a real value each, or a malformed one. */
  param: (name: string) => string;
  query?: string;
  body?: BodyInit;
  contentType?: string;
  headers?: Record<string, string>;
}

const real = (name: string) => (name === "name" || name === "app" ? APP : name === "server" ? "notes" : "x1");

const VARIANTS: Variant[] = [
  { name: "JSON cut short", param: real, body: '{"a":', contentType: "application/json" },
  { name: "a JSON array", param: real, body: "[1,2]", contentType: "application/json" },
  { name: "JSON with a lone surrogate", param: real, body: '{"a":"\\ud800"}', contentType: "application/json" },
  { name: "text/plain", param: real, body: '{"a":1}', contentType: "text/plain" },
  { name: "form-encoded", param: real, body: "a=1", contentType: "application/x-www-form-urlencoded" },
  { name: "not UTF-8", param: real, body: new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]), contentType: "application/json" },
  { name: "deep JSON", param: real, body: "[".repeat(200_000) + "]".repeat(200_000), contentType: "application/json" },
  {
    name: "deep object",
    param: real,
    body: '{"a":'.repeat(50_000) + "1" + "}".repeat(50_000),
    contentType: "application/json",
  },
  { name: "duplicate keys", param: real, body: '{"a":1,"a":2}', contentType: "application/json" },
  { name: "huge number", param: real, body: '{"value":1e400,"ttl_seconds":1e400}', contentType: "application/json" },
  { name: "utf-16 charset", param: real, body: '{"a":', contentType: "application/json; charset=utf-16" },
  { name: "json with junk type", param: real, body: '{"a":', contentType: "application/json;;;=" },
  {
    name: "a bad cookie",
    param: real,
    body: '{"a":',
    contentType: "application/json",
    headers: { cookie: "pc_token_1=%zz; pc_token_1=a" },
  },
  {
    name: "empty bearer",
    param: real,
    body: '{"a":',
    contentType: "application/json",
    headers: { authorization: "Bearer " },
  },
  {
    name: "bad if-match",
    param: real,
    body: '{"a":',
    contentType: "application/json",
    headers: { "if-match": `"${"x".repeat(5000)}` },
  },
  { name: "a bad percent query", param: real, query: "?%zz=%zz&state=%ff" },
  { name: "an unknown query", param: real, query: "?zz=1&wait=-1&limit=abc&lines=1e99&ttl=zz&state=nope" },
  { name: "a 300-character parameter", param: () => "a".repeat(300), body: "{}", contentType: "application/json" },
  {
    name: "a parameter of odd characters",
    param: () => "%E2%80%AE%00%20..",
    body: "{}",
    contentType: "application/json",
  },
  { name: "a bad percent parameter", param: () => "%zz", body: "{}", contentType: "application/json" },
  { name: "a parameter that is not UTF-8", param: () => "%ff%fe", body: "{}", contentType: "application/json" },
];

const localSecret = (gw: RunningGateway) => readFileSync(join(gw.home, ".local_secret"), "utf8").trim();

function pathOf(row: TableRow, variant: Variant): string {
  return row.path.replace(/:([a-z_]+)/gi, (_, name: string) => variant.param(name)) + (variant.query ?? "");
}

/**
 * A home whose MCP Registry source is a closed port on this machine: the Store's listing
 * answers 502 source_unreachable at once, and no test looks up the official registry's name.
 */
function homeWithClosedRegistry(): string {
  const home = makeHome();
  writeFileSync(join(home, "config.json"), JSON.stringify({ install: { mcp_registries: ["http://127.0.0.1:9/"] } }));
  return home;
}

describe("malformed requests against every route", () => {
  const gw = gatewayPerSuite({ home: homeWithClosedRegistry() });

  it("no route answers 500 to a malformed request", async () => {
    await install(gw.home, join(repoRoot, "apps", "fixtures", APP));
    expect((await waitForRow(gw, APP, (row) => row.healthy))?.healthy).toBe(true);
    const failures: string[] = [];
    for (const row of ROUTES) {
      // The proxy forwards what it gets to the app; its answers are the app's.
      if (row.path.startsWith("/apps/")) continue;
      for (const variant of VARIANTS) {
        // A well-formed request would do the route's work; each variant is malformed for this row.
        if (variant.query !== undefined && row.query === undefined) continue;
        if (variant.headers?.authorization !== undefined && (row.internal || row.authz.kind === "internal-only"))
          continue;
        if (variant.param !== real && !row.path.includes(":")) continue;
        const headers: Record<string, string> = { ...variant.headers };
        if (variant.contentType) headers["content-type"] = variant.contentType;
        if (row.internal || row.authz.kind === "internal-only") {
          headers["x-internal-secret"] = localSecret(gw);
          headers["x-personalclaw-work"] = "malformed";
        }
        const hasBody = variant.body !== undefined && row.method !== "GET" && row.method !== "HEAD";
        let status: number;
        let text: string;
        try {
          const response = await gw.fetch(pathOf(row, variant), {
            method: row.method,
            headers,
            body: hasBody ? variant.body : undefined,
          });
          [status, text] = [response.status, await response.text()];
        } catch (error) {
          failures.push(`${row.method} ${row.path} (${variant.name}): ${String((error as Error).cause ?? error)}`);
          continue;
        }
        const where = `${row.method} ${row.path} (${variant.name}): ${status} ${text.slice(0, 200)}`;
        // A route that reads an outside source answers 502 source_unreachable when it cannot: an answer, not a fault.
        const unreachable = status === 502 && text.startsWith('{"error":{"code":"source_unreachable"');
        if (status >= 500 && status !== 503 && !unreachable) failures.push(where);
        else if (status >= 400 && !/^\{"error":\{"code":"[a-z][a-z0-9_]*"/.test(text)) failures.push(where);
      }
    }
    expect(failures).toEqual([]);
  }, 300_000);

  it("a body a route cannot read is a security-log row; an app's flood of them is one row and a count", async () => {
    const before = await rowsAfter(gw, 0);
    const fromSeq = Math.max(0, ...before.map((row) => row.seq));
    const owner = await gw.fetch("/api/auth/sessions/x1/name", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"name":',
    });
    expect(owner.status).toBe(400);
    expect(await errorCode(owner)).toBe("bad_request");
    const appToken = await appTokenOf(gw, APP);
    for (let i = 0; i < 30; i++) {
      const refused = await gw.fetch("/api/apps/message", {
        method: "POST",
        headers: { authorization: `Bearer ${appToken}`, "content-type": "text/plain" },
        body: `{"to":"x${i}"}`,
      });
      expect(refused.status).toBe(415);
      expect(await errorCode(refused)).toBe("unsupported_media_type");
    }
    const added = (await rowsAfter(gw, fromSeq)).filter(
      (row) => row.kind === "request_input_refused" || row.detail.kind === "request_input_refused",
    );
    expect(added.map((row) => [row.kind, row.principal, row.subject, row.detail.code ?? row.detail.count])).toEqual([
      ["request_input_refused", "owner", "POST /api/auth/sessions/x1/name", "bad_request"],
      ["request_input_refused", `app:${APP}`, "POST /api/apps/message", "unsupported_media_type"],
      ["sel.refusals_counted", `app:${APP}`, "29 × request_input_refused", 29],
    ]);
  });
});

interface LogRow {
  seq: number;
  kind: string;
  principal: string;
  subject: string;
  detail: Record<string, any>;
}

/** Every security-log row after `seq`, oldest first (a read writes the counts waiting before it answers). */
async function rowsAfter(gw: RunningGateway, seq: number): Promise<LogRow[]> {
  const rows: LogRow[] = [];
  let before: number | null = null;
  for (;;) {
    const response = await gw.fetch(`/api/security/events?limit=500${before ? `&before_seq=${before}` : ""}`);
    const body = (await response.json()) as { events: LogRow[]; next_before_seq: number | null };
    rows.push(...body.events.filter((row) => row.seq > seq));
    if (body.next_before_seq === null || body.events.some((row) => row.seq <= seq))
      return rows.sort((a, b) => a.seq - b.seq);
    before = body.next_before_seq;
  }
}

/** The app's own token, as its backend receives it from the proxy. */
async function appTokenOf(gw: RunningGateway, name: string): Promise<string> {
  const echo = (await (await gw.fetch(`/apps/${name}/api/echo`)).json()) as { headers: { authorization: string } };
  return echo.headers.authorization.replace(/^Bearer /, "");
}
