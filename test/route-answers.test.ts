// The answer each route row declares is what the real gateway answers: every GET route that
// has no side effect, and a handful of writes, are called on a real gateway with a real app
// installed, and each answer is parsed with its row's own schema. A schema that says one
// thing while the handler answers another fails here.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayPerSuite, repoRoot, type RunningGateway } from "./helpers/gateway";
import { registryFixture, startMcpRegistry, type McpRegistryStandIn } from "./helpers/mcp-registry";
import { install, waitForRow } from "./helpers/backends";
import { routeTable, type TableRow } from "./helpers/route-table";
import { toolDefinitionDigest } from "../kernel/contracts/mcp-tools";

const APP = "node-notes";
// The fixture with an MCP server and a scheduled job, so those answers are not empty lists.
const MCP_APP = "mcp-notes";
const json = { "content-type": "application/json" };

let ROUTES: ReadonlyArray<TableRow> = [];
beforeAll(async () => {
  ROUTES = (await routeTable()).ROUTES;
});

function rowOf(method: string, path: string) {
  const row = ROUTES.find((r) => r.method === method && r.path === path);
  if (!row) throw new Error(`no row ${method} ${path}`);
  return row;
}

/** Asserts the answer has the row's declared status and parses with its declared schema; answers the parsed body. */
async function expectDeclaredAnswer(method: string, pattern: string, response: Response): Promise<unknown> {
  const row = rowOf(method, pattern);
  if ("streamed" in row.answer) throw new Error(`${method} ${pattern} streams; it has no schema to parse with`);
  const text = await response.text();
  expect(response.status, `${method} ${pattern}: ${text.slice(0, 500)}`).toBe(row.answer.status ?? 200);
  const parsed = row.answer.schema.safeParse(JSON.parse(text));
  expect(parsed.error?.issues ?? [], `${method} ${pattern} answered ${text.slice(0, 500)}`).toEqual([]);
  return parsed.data;
}

const localSecret = (gw: RunningGateway) => readFileSync(join(gw.home, ".local_secret"), "utf8").trim();
const internal = (gw: RunningGateway) => ({
  "x-internal-secret": localSecret(gw),
  "x-personalclaw-work": "route-answers",
});

async function appTokenOf(gw: RunningGateway, name: string): Promise<string> {
  const echo = (await (await gw.fetch(`/apps/${name}/api/echo`)).json()) as { headers: { authorization: string } };
  return echo.headers.authorization.replace(/^Bearer /, "");
}

describe("every route answers what its row declares", () => {
  const gw = gatewayPerSuite();
  let approvalId = "";
  let mcpApprovalId = "";
  // The Store's listing reads a configured MCP Registry: a stand-in on loopback, never the internet.
  let registry: McpRegistryStandIn;
  beforeAll(async () => {
    registry = await startMcpRegistry({ entries: [registryFixture("server-memory.json")] });
    // A whole list replaces a document: the write names the revision it read.
    const { revisions } = (await (await gw.fetch("/api/config/personalclaw")).json()) as {
      revisions: Record<string, string>;
    };
    const configured = await gw.fetch("/api/config/personalclaw", {
      method: "PATCH",
      headers: { ...json, "if-match": `"${revisions["install.mcp_registries"]}"` },
      body: JSON.stringify({ path: "install.mcp_registries", value: [registry.url], confirm: true }),
    });
    expect(configured.status, await configured.clone().text()).toBe(200);
  });
  afterAll(async () => registry?.close());

  it("installs the fixture apps and raises one approval to read back", async () => {
    for (const app of [APP, MCP_APP]) {
      await install(gw.home, join(repoRoot, "apps", "fixtures", app));
      expect((await waitForRow(gw, app, (row) => row.healthy))?.healthy, app).toBe(true);
    }
    const raised = await gw.fetch("/api/approvals", {
      method: "POST",
      owner: false,
      headers: { ...json, ...internal(gw) },
      body: JSON.stringify({
        kind: "notes.publish",
        title: "Publish a note",
        action: { route: "POST /notes/publish", target: "note-1", arguments_digest: `sha256:${"a".repeat(64)}` },
      }),
    });
    const body = (await expectDeclaredAnswer("POST", "/api/approvals", raised)) as { approval: { id: string } };
    approvalId = body.approval.id;
    // An MCP server's tools pinned as its first run reports them, and a call to one that asks.
    const consent = (await (await gw.fetch(`/api/apps/${MCP_APP}/consent`)).json()) as { digest: string };
    const echo = { name: "echo", description: "Echoes.", inputSchema: { type: "object" } };
    const base = `/api/internal/mcp/${MCP_APP}/notes`;
    const asProcess = (path: string, payload: unknown) =>
      gw.fetch(path, {
        method: "POST",
        owner: false,
        headers: { ...json, ...internal(gw) },
        body: JSON.stringify(payload),
      });
    const pinned = await asProcess(`${base}/tools`, { consentDigest: consent.digest, tools: [echo] });
    await expectDeclaredAnswer("POST", "/api/internal/mcp/:app/:server/tools", pinned);
    const asked = await asProcess(`${base}/calls`, {
      consentDigest: consent.digest,
      tool: "echo",
      definitionDigest: await toolDefinitionDigest(echo),
      argumentsDigest: `sha256:${"b".repeat(64)}`,
      argumentsShown: "{}",
      askTimeoutSeconds: 600,
    });
    mcpApprovalId = (
      (await expectDeclaredAnswer("POST", "/api/internal/mcp/:app/:server/calls", asked)) as {
        approvalId: string;
      }
    ).approvalId;
  });

  it("answers every side-effect-free GET route with its declared schema", async () => {
    const appToken = await appTokenOf(gw, APP);
    const asInternal = { owner: false, headers: internal(gw) };
    const asApp = { headers: { authorization: `Bearer ${appToken}` } };
    // The call each GET row gets: its path filled with real values, as the principal the route is for.
    const calls: Record<string, { path: string; init?: RequestInit & { owner?: boolean } }> = {
      "/api/status": { path: "/api/status" },
      "/api/auth/sessions": { path: "/api/auth/sessions" },
      "/api/security/events": { path: "/api/security/events?limit=20" },
      "/api/security/events/verify": { path: "/api/security/events/verify" },
      "/api/internal/sel/head": { path: "/api/internal/sel/head", init: asInternal },
      "/api/security/checkpoint": { path: "/api/security/checkpoint" },
      "/api/security/witness": { path: "/api/security/witness?origin=example.org%2Flog" },
      "/api/internal/sel/checkpoint": { path: "/api/internal/sel/checkpoint", init: asInternal },
      "/api/apps/message": { path: "/api/apps/message", init: asApp },
      "/api/apps/installs/:id": { path: "/api/apps/installs/0123456789abcdef" },
      "/api/apps": { path: "/api/apps" },
      "/api/apps/parked": { path: "/api/apps/parked" },
      "/api/apps/:name": { path: `/api/apps/${APP}` },
      "/api/apps/:name/config": { path: `/api/apps/${APP}/config` },
      "/api/apps/:name/jobs": { path: `/api/apps/${MCP_APP}/jobs` },
      "/api/apps/:name/consent": { path: `/api/apps/${APP}/consent` },
      "/api/apps/:name/logs": { path: `/api/apps/${APP}/logs?lines=20` },
      "/api/apps/:name/folders": { path: `/api/apps/${APP}/folders` },
      "/api/apps/:name/secrets": { path: `/api/apps/${APP}/secrets` },
      "/api/internal/apps/:name/folders": { path: `/api/internal/apps/${APP}/folders`, init: asInternal },
      "/api/internal/apps/startable": { path: "/api/internal/apps/startable", init: asInternal },
      "/api/approvals": { path: "/api/approvals" },
      "/api/approvals/grants": { path: "/api/approvals/grants" },
      "/api/approvals/:id": { path: `/api/approvals/${approvalId}` },
      "/api/config/personalclaw": { path: "/api/config/personalclaw" },
      "/api/settings/sandbox": { path: "/api/settings/sandbox" },
      "/api/secrets": { path: "/api/secrets" },
      "/api/mcp": { path: "/api/mcp" },
      "/api/internal/mcp/:app/:server/alive": { path: `/api/internal/mcp/${MCP_APP}/notes/alive`, init: asInternal },
      "/api/mcp/:app/tools": { path: `/api/mcp/${MCP_APP}/tools` },
      "/api/mcp/:app/calls": { path: `/api/mcp/${MCP_APP}/calls` },
      "/api/internal/mcp/:app/:server/calls/:id": {
        path: `/api/internal/mcp/${MCP_APP}/notes/calls/${mcpApprovalId}`,
        init: asInternal,
      },
      "/api/manifest": { path: "/api/manifest" },
      "/api/openapi.json": { path: "/api/openapi.json" },
      "/api/sources/registry": { path: "/api/sources/registry" },
      "/api/sources/outdated": { path: "/api/sources/outdated" },
    };
    // Minting a token is a write (it is called below); a streamed answer has no schema to parse; an
    // edge-mode route answers edge_mode_off on this local gateway (test/edge-link.test.ts reads them at the edge).
    const getRows = ROUTES.filter(
      (row) =>
        row.method === "GET" &&
        !("streamed" in row.answer) &&
        row.path !== "/api/token/local" &&
        !row.path.startsWith("/api/edge/"),
    );
    expect(getRows.map((row) => row.path).sort()).toEqual(Object.keys(calls).sort());
    // A read of the checkpoint signs none: the owner's POST signs the first, declared like every answer.
    const signed = await gw.fetch("/api/security/checkpoint", { method: "POST" });
    await expectDeclaredAnswer("POST", "/api/security/checkpoint", signed);
    const answers: Record<string, unknown> = {};
    for (const row of getRows) {
      const call = calls[row.path]!;
      answers[row.path] = await expectDeclaredAnswer("GET", row.path, await gw.fetch(call.path, call.init));
    }
    // The lists the schemas describe held real entries, not only empty arrays.
    const names = (answers["/api/apps"] as { apps: Array<{ name: string }> }).apps.map((app) => app.name);
    expect(names).toEqual(expect.arrayContaining([APP, MCP_APP]));
    expect((answers["/api/apps/:name/jobs"] as { jobs: unknown[] }).jobs).toHaveLength(1);
    expect((answers["/api/mcp"] as { servers: unknown[] }).servers).toHaveLength(1);
    // The app's approval and the tool call that asked.
    const approvals = (answers["/api/approvals"] as { approvals: Array<{ id: string }> }).approvals;
    expect(approvals.map((a) => a.id).sort()).toEqual([approvalId, mcpApprovalId].sort());
    expect((answers["/api/sources/registry"] as { entries: unknown[] }).entries).toHaveLength(1);
    expect((answers["/api/security/events"] as { events: unknown[] }).events.length).toBeGreaterThan(0);
  });

  it("answers a minted token and signing out another session with their declared schemas", async () => {
    const minted = await gw.fetch("/api/token/local?ttl=1h", { headers: { "x-local-secret": localSecret(gw) } });
    const token = ((await expectDeclaredAnswer("GET", "/api/token/local", minted)) as { token: string }).token;
    // The minted token's session is a sign-in that is not the one making the next request.
    const own = (await (
      await gw.fetch("/api/auth/sessions", { headers: { authorization: `Bearer ${token}` } })
    ).json()) as {
      sessions: Array<{ id: string; current: boolean }>;
    };
    const mintedId = own.sessions.find((s) => s.current)!.id;
    const signedOut = await gw.fetch(`/api/auth/sessions/${mintedId}/signout`, {
      method: "POST",
      headers: json,
      body: "{}",
    });
    expect(await expectDeclaredAnswer("POST", "/api/auth/sessions/:id/signout", signedOut)).toEqual({ signed_out: 1 });
  });

  it("answers disable, enable and an app config write with their declared schemas", async () => {
    const disabled = await gw.fetch(`/api/apps/${APP}/disable`, { method: "POST", headers: json, body: "{}" });
    expect(await expectDeclaredAnswer("POST", "/api/apps/:name/disable", disabled)).toMatchObject({ changed: true });
    const enabled = await gw.fetch(`/api/apps/${APP}/enable`, { method: "POST", headers: json, body: "{}" });
    expect(await expectDeclaredAnswer("POST", "/api/apps/:name/enable", enabled)).toMatchObject({ changed: true });
    const { revision } = (await (await gw.fetch(`/api/apps/${APP}/config`)).json()) as { revision: string };
    const replaced = await gw.fetch(`/api/apps/${APP}/config`, {
      method: "PUT",
      headers: { ...json, "if-match": `"${revision}"` },
      body: JSON.stringify({ config: { theme: "dark" } }),
    });
    expect(await expectDeclaredAnswer("PUT", "/api/apps/:name/config", replaced)).toMatchObject({
      config: { theme: "dark" },
    });
  });

  it("answers a setting written, a loosening asked about, and the sandbox alias with their declared schemas", async () => {
    const tightened = await gw.fetch("/api/config/personalclaw", {
      method: "PATCH",
      headers: json,
      body: JSON.stringify({ path: "sandbox.limits.processes", value: 128 }),
    });
    expect(await expectDeclaredAnswer("PATCH", "/api/config/personalclaw", tightened)).toMatchObject({ value: 128 });
    const asked = await gw.fetch("/api/config/personalclaw", {
      method: "PATCH",
      headers: { ...json, "x-personalclaw-consent": "ask" },
      body: JSON.stringify({ path: "sandbox.mode", value: "off" }),
    });
    expect(await expectDeclaredAnswer("PATCH", "/api/config/personalclaw", asked)).toMatchObject({
      error: { code: "confirmation_required" },
    });
    const alias = await gw.fetch("/api/settings/sandbox", {
      method: "PATCH",
      headers: json,
      body: JSON.stringify({ processes: 100 }),
    });
    expect(await expectDeclaredAnswer("PATCH", "/api/settings/sandbox", alias)).toMatchObject({
      sandbox: { processes: 100 },
    });
  });

  it("answers a secret stored and deleted, an approval denied and a log rotation with their declared schemas", async () => {
    const stored = await gw.fetch("/api/secrets/ROUTE_ANSWERS_KEY", {
      method: "PUT",
      headers: json,
      body: JSON.stringify({ value: "not-a-real-key" }),
    });
    expect(await expectDeclaredAnswer("PUT", "/api/secrets/:name", stored)).toMatchObject({ replaced: false });
    const deleted = await gw.fetch("/api/secrets/ROUTE_ANSWERS_KEY", { method: "DELETE", headers: json, body: "{}" });
    expect(await expectDeclaredAnswer("DELETE", "/api/secrets/:name", deleted)).toMatchObject({
      deleted: "ROUTE_ANSWERS_KEY",
    });
    const denied = await gw.fetch(`/api/approvals/${approvalId}/deny`, { method: "POST", headers: json, body: "{}" });
    expect(await expectDeclaredAnswer("POST", "/api/approvals/:id/deny", denied)).toMatchObject({
      approval: { state: "denied" },
      grant: null,
    });
    const rotated = await gw.fetch("/api/sel/rotate", { method: "POST", headers: json, body: "{}" });
    expect(await expectDeclaredAnswer("POST", "/api/sel/rotate", rotated)).toMatchObject({ rotated: true });
  });

  it("answers an MCP server turned off and retried with their declared schemas", async () => {
    const off = await gw.fetch(`/api/mcp/${MCP_APP}/notes/toggle`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ enabled: false }),
    });
    expect(await expectDeclaredAnswer("POST", "/api/mcp/:app/:server/toggle", off)).toMatchObject({
      server: { key: `${MCP_APP}:notes`, state: "off" },
    });
    const retried = await gw.fetch(`/api/mcp/${MCP_APP}/notes/retry`, { method: "POST", headers: json, body: "{}" });
    expect(await expectDeclaredAnswer("POST", "/api/mcp/:app/:server/retry", retried)).toMatchObject({
      server: { ownerEnabled: false, failedStarts: 0 },
    });
  });

  it("answers preview, install, update, restart, uninstall and purging parked data with their declared schemas", async () => {
    const root = mkdtempSync(join(tmpdir(), "pc-route-answers-"));
    try {
      const source = join(root, "notes-copy");
      cpSync(join(repoRoot, "apps", "fixtures", APP), source, { recursive: true });
      const manifest = JSON.parse(readFileSync(join(source, "app.json"), "utf8"));
      const permissions = { ...manifest.permissions, api: ["/api/apps/notes-copy/"] };
      writeFileSync(join(source, "app.json"), JSON.stringify({ ...manifest, name: "notes-copy", permissions }));

      const previewed = await gw.fetch("/api/apps/preview", {
        method: "POST",
        headers: json,
        body: JSON.stringify({ source }),
      });
      const { digest } = (await expectDeclaredAnswer("POST", "/api/apps/preview", previewed)) as { digest: string };
      const installed = await gw.fetch("/api/apps", {
        method: "POST",
        headers: json,
        body: JSON.stringify({ source, consent: digest }),
      });
      expect(await expectDeclaredAnswer("POST", "/api/apps", installed)).toMatchObject({
        app: { name: "notes-copy" },
        digest,
      });
      await waitForRow(gw, "notes-copy", (row) => row.healthy);

      const updated = await gw.fetch("/api/apps/notes-copy/update", {
        method: "POST",
        headers: json,
        body: JSON.stringify({ source }),
      });
      expect(await expectDeclaredAnswer("POST", "/api/apps/:name/update", updated)).toMatchObject({ digest });
      const restarted = await gw.fetch("/api/apps/notes-copy/restart", { method: "POST", headers: json, body: "{}" });
      expect(await expectDeclaredAnswer("POST", "/api/apps/:name/restart", restarted)).toMatchObject({
        app: { name: "notes-copy" },
      });

      const removed = await gw.fetch("/api/apps/notes-copy", { method: "DELETE", headers: json, body: "{}" });
      expect(await expectDeclaredAnswer("DELETE", "/api/apps/:name", removed)).toEqual({
        removed: "notes-copy",
        data_kept: true,
        secrets_taken_back: [],
      });
      const parked = await expectDeclaredAnswer("GET", "/api/apps/parked", await gw.fetch("/api/apps/parked"));
      expect(parked).toMatchObject({ parked: [{ name: "notes-copy" }] });
      const purged = await gw.fetch("/api/apps/parked/notes-copy", { method: "DELETE", headers: json, body: "{}" });
      expect(await expectDeclaredAnswer("DELETE", "/api/apps/parked/:name", purged)).toEqual({
        purged: "notes-copy",
      });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
