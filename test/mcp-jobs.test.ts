// App MCP servers and scheduled jobs end to end (issue 20; MCP-01..08, CRON-01, CRON-05,
// UNIN-02, C-12): the real `personalclaw start`, real installs through the CLI, the registered
// command started by the official MCP SDK's own client the way an agent starts it, real
// bubblewrap around the server, and jobs driven by the injectable clock (X-Test-Now, test runs
// only) through the same fire the Durable Object alarm runs.
//
// Homes live under /var/tmp, not /tmp: the sandbox gives every child a private /tmp, which
// would hide planted files there and make every "cannot read" verdict pass for the wrong reason.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliPath, repoRoot, runCli, startGateway, type RunningGateway } from "./helpers/gateway";
import { install, waitForRow } from "./helpers/backends";
import { plantCredentialStores } from "./fixtures/hostile/credential-stores";
// The client half of the same vendored SDK (test/fixtures/mcp-client-sdk.mjs): the agent.
import { agentFromMcpJson } from "./helpers/mcp-agent";
import { allowEveryTool } from "./helpers/mcp-tool-policy";

const fixture = join(repoRoot, "apps", "fixtures", "mcp-notes");
const broken = join(repoRoot, "test", "fixtures", "backend-apps", "mcp-broken");
const nodeNotes = join(repoRoot, "apps", "fixtures", "node-notes");
const json = { "content-type": "application/json" };
const OWNER_ENTRIES = {
  "owner-tool": { command: "/usr/bin/owner-tool", args: ["--serve"], disabledTools: ["rm"] },
  // Under the app's prefix but never declared by it: the owner's, kept (ownership by exact name).
  "mcp-notes:custom": { command: "/usr/bin/custom" },
};

interface McpEntry {
  command: string;
  args: string[];
  disabled?: boolean;
  [flag: string]: unknown;
}

describe("app MCP servers and scheduled jobs", () => {
  let root: string;
  let ownerHome: string;
  let home: string;
  let planted: string[];
  let gw: RunningGateway;
  let source: string;
  const mcpJsonPath = () => join(home, "mcp.json");
  const mcpJson = () =>
    JSON.parse(readFileSync(mcpJsonPath(), "utf8")) as { mcpServers: Record<string, McpEntry>; [key: string]: unknown };
  const cli = (args: string[], timeoutMs = 60_000) => runCli([...args, "--home", home], { HOME: ownerHome }, timeoutMs);
  const post = (path: string, body: unknown = {}) =>
    gw.fetch(path, { method: "POST", headers: json, body: JSON.stringify(body) });

  /** Starts the registered command as an agent would: command and args from mcp.json, a plain environment. */
  /** True once `client`'s connection closes, false if it is still open after `ms`. */
  function closedWithin(client: any, ms: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      client.onclose = () => {
        clearTimeout(timer);
        resolve(true);
      };
    });
  }

  async function connect(key: string): Promise<{ client: any; stderr: () => string }> {
    const { client, stderr } = await agentFromMcpJson(home, key, ownerHome);
    await allowEveryTool(gw, client, ...(key.split(":") as [string, string]));
    return { client, stderr };
  }

  async function callText(client: any, name: string, args: Record<string, unknown>): Promise<string> {
    const result = await client.callTool({ name, arguments: args });
    return (result.content as Array<{ type: string; text: string }>)[0]!.text;
  }

  async function servers(): Promise<Array<Record<string, any>>> {
    const answer = await gw.fetch("/api/mcp");
    expect(answer.status).toBe(200);
    return ((await answer.json()) as { servers: Array<Record<string, any>> }).servers;
  }

  async function jobs(now?: number): Promise<Array<Record<string, any>>> {
    // A moved clock reaches the job schedule through the internal credential: an owner session
    // read at a time past its expiry would end, for the rest of the suite.
    const headers: Record<string, string> =
      now === undefined
        ? {}
        : {
            "x-test-now": String(now),
            "x-internal-secret": readFileSync(join(home, ".local_secret"), "utf8").trim(),
            "x-personalclaw-work": "cli:test-clock",
          };
    const answer = await gw.fetch("/api/apps/mcp-notes/jobs", { headers, owner: now === undefined });
    expect(answer.status, await answer.clone().text()).toBe(200);
    return ((await answer.json()) as { jobs: Array<Record<string, any>> }).jobs;
  }

  beforeAll(async () => {
    root = mkdtempSync("/var/tmp/pc-mcp-jobs-");
    ownerHome = join(root, "owner");
    home = join(ownerHome, ".personalclaw");
    mkdirSync(home, { recursive: true });
    planted = plantCredentialStores(ownerHome);
    writeFileSync(join(home, "mcp.json"), JSON.stringify({ theme: "kept", mcpServers: OWNER_ENTRIES }, null, 2));
    source = join(root, "mcp-notes-source");
    cpSync(fixture, source, { recursive: true });
    gw = await startGateway({ home, env: { HOME: ownerHome } });
    await install(home, source, { HOME: ownerHome });
    await install(home, broken, { HOME: ownerHome });
    await install(home, nodeNotes, { HOME: ownerHome });
    await waitForRow(gw, "mcp-notes", (row) => row.healthy);
    await waitForRow(gw, "node-notes", (row) => row.healthy);
  });

  afterAll(async () => {
    await gw?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("installing the fixture adds mcp-notes:notes to mcp.json (0600) as `personalclaw mcp run`, leaving every other entry and key as it was", async () => {
    const file = mcpJson();
    expect(statSync(mcpJsonPath()).mode & 0o777).toBe(0o600);
    expect(file.theme).toBe("kept");
    expect(file.mcpServers["owner-tool"]).toEqual(OWNER_ENTRIES["owner-tool"]);
    expect(file.mcpServers["mcp-notes:custom"]).toEqual(OWNER_ENTRIES["mcp-notes:custom"]);
    expect(file.mcpServers["mcp-notes:notes"]).toEqual({
      command: join(repoRoot, "bin", "personalclaw.mjs"),
      args: ["mcp", "run", "mcp-notes", "notes", "--home", home],
    });
    const path = await cli(["mcp", "path"]);
    expect(path.stdout.trim()).toBe(mcpJsonPath());
  });

  it("an MCP client spawning the registered command lists the server's tools and calls one; the start is recorded", async () => {
    const { client } = await connect("mcp-notes:notes");
    try {
      const tools = (await client.listTools()).tools.map((t: { name: string }) => t.name).sort();
      expect(tools).toEqual(["add_note", "echo", "fetch_text", "list_notes", "probe"]);
      expect(await callText(client, "echo", { text: "hi" })).toBe("hello from mcp-notes: hi");
      expect(JSON.parse(await callText(client, "add_note", { text: "kept in data/" }))).toEqual({ kept: 1 });
    } finally {
      await client.close();
    }
    const row = (await servers()).find((s) => s.key === "mcp-notes:notes");
    expect(row).toMatchObject({
      app: "mcp-notes",
      server: "notes",
      transport: "stdio",
      state: "registered",
      failedStarts: 0,
      lastStart: { ok: true },
    });
    const listed = await cli(["mcp", "list", "--json"]);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).servers.map((s: { key: string }) => s.key)).toEqual([
      "mcp-broken:broken",
      "mcp-broken:slow",
      "mcp-notes:notes",
    ]);
    expect(listed.stdout).not.toContain("node-notes");
  });

  it("from inside the server the owner's home, the PersonalClaw home and every planted credential store are invisible; its cwd is the app folder", async () => {
    const { client } = await connect("mcp-notes:notes");
    try {
      const probe = async (path: string) =>
        JSON.parse(await callText(client, "probe", { path })) as {
          cwd: string;
          exists: boolean;
          read: string;
          list: unknown;
        };
      const own = await probe(".");
      expect(own.cwd).toBe(join(home, "apps", "mcp-notes"));
      expect(own.list).toEqual(expect.arrayContaining(["app.json", "mcp-server.mjs"]));
      // Inside, the folders above the app's own are only the path its bind mount needs.
      expect((await probe(root)).list).toEqual(["owner"]);
      expect((await probe(ownerHome)).list).toEqual([".personalclaw"]);
      expect((await probe(home)).list).toEqual(["apps"]);
      expect((await probe(join(home, "apps"))).list).toEqual(["mcp-notes"]);
      for (const hidden of [
        join(home, ".local_secret"),
        join(home, "mcp.json"),
        join(home, "config.json"),
        join(home, "state"),
        join(root, "mcp-notes-source"),
      ]) {
        expect((await probe(hidden)).exists, hidden).toBe(false);
      }
      for (const file of planted) {
        const seen = await probe(file);
        expect(seen.exists, file).toBe(false);
        expect(seen.read, file).toMatch(/^error/);
      }
    } finally {
      await client.close();
    }
  });

  it("/api/mcp is the owner's: an app token is refused every MCP route, reads included, and there is no route to add a server", async () => {
    expect((await gw.fetch("/api/mcp", { owner: false })).status).toBe(403);
    // The token the proxy hands node-notes' backend, which echoes what it received.
    const echo = (await (await gw.fetch("/apps/node-notes/api/echo")).json()) as { headers: { authorization: string } };
    const appToken = echo.headers.authorization.replace(/^Bearer /, "");
    for (const [method, path, body] of [
      ["GET", "/api/mcp", undefined],
      ["POST", "/api/mcp/mcp-notes/notes/toggle", JSON.stringify({ enabled: false })],
      ["POST", "/api/mcp/mcp-notes/notes/retry", "{}"],
      ["POST", "/api/internal/mcp/mcp-notes/notes/launch", JSON.stringify({ definitionDigest: "x" })],
      ["GET", "/api/apps/mcp-notes/jobs", undefined],
    ] as const) {
      const answer = await gw.fetch(path, {
        method,
        body,
        headers: { ...(body ? json : {}), authorization: `Bearer ${appToken}` },
      });
      expect(answer.status, `${method} ${path}`).toBe(403);
    }
    expect(mcpJson().mcpServers["mcp-notes:notes"]!.disabled).toBeUndefined();
    expect((await post("/api/mcp", { name: "x", command: "sh" })).status).toBe(404);
  });

  it("a server the owner turns off carries disabled in mcp.json and `mcp run` refuses it; on again, the flag is gone", async () => {
    expect((await post("/api/mcp/mcp-notes/notes/toggle", { enabled: false })).status).toBe(200);
    expect(mcpJson().mcpServers["mcp-notes:notes"]!.disabled).toBe(true);
    const refused = await cli(["mcp", "run", "mcp-notes", "notes"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("mcp_server_off");
    expect((await post("/api/mcp/mcp-notes/notes/toggle", { enabled: true })).status).toBe(200);
    expect(mcpJson().mcpServers["mcp-notes:notes"]!.disabled).toBeUndefined();
  });

  it("a server that fails 3 starts in a row records each exit and stderr line, is not started again, and starts again after Retry", async () => {
    // The first as an agent starts it, its stdin held open: `mcp run` still ends when its server does.
    const held = spawn(process.execPath, [cliPath, "mcp", "run", "mcp-broken", "broken", "--home", home], {
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, HOME: ownerHome },
    });
    let heldStderr = "";
    held.stderr.on("data", (chunk: Buffer) => (heldStderr += chunk.toString()));
    const heldCode = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => {
        held.kill("SIGKILL");
        resolve(-1);
      }, 30_000);
      held.once("exit", (code) => {
        clearTimeout(timer);
        resolve(code);
      });
    });
    expect(heldCode).toBe(7);
    // Its stderr reached the agent masked and escaped, each line named for the server.
    expect(heldStderr).toContain("mcp-broken:broken: broken: my key is ***");
    expect(heldStderr).toContain("mcp-broken:broken: broken: token *** \\x1b[2Jscreen cleared");
    expect(heldStderr).toContain("mcp-broken:broken: broken: the settings file is missing");
    expect(heldStderr).not.toContain("fixture-service-key-5c1e9a");
    expect(heldStderr).not.toContain("A1b2C3d4E5f6G7h8");
    expect(heldStderr).not.toContain("\u001b");
    for (let i = 0; i < 2; i++) {
      const run = await cli(["mcp", "run", "mcp-broken", "broken"]);
      expect(run.code).toBe(7);
    }
    let row = (await servers()).find((s) => s.key === "mcp-broken:broken")!;
    expect(row).toMatchObject({
      state: "failing",
      failedStarts: 3,
      lastStart: { ok: false, exitCode: 7, reason: "broken: the settings file is missing" },
    });
    const refused = await cli(["mcp", "run", "mcp-broken", "broken"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("mcp_server_failing");
    const retried = await cli(["mcp", "retry", "mcp-broken", "broken", "--json"]);
    expect(retried.code).toBe(0);
    expect((await cli(["mcp", "run", "mcp-broken", "broken"])).code).toBe(7);
    row = (await servers()).find((s) => s.key === "mcp-broken:broken")!;
    expect(row).toMatchObject({ state: "registered", failedStarts: 1 });
  });

  it("a start that has not answered yet shows as starting and a second start waits for it instead of starting beside it", async () => {
    const first = cli(["mcp", "run", "mcp-broken", "slow"]);
    let state = "";
    for (let i = 0; i < 100 && state !== "starting"; i++) {
      state = (await servers()).find((s) => s.key === "mcp-broken:slow")!.state;
      if (state !== "starting") await new Promise((r) => setTimeout(r, 50));
    }
    expect(state).toBe("starting");
    let firstEnded = 0;
    void first.then(() => (firstEnded = Date.now()));
    const second = await cli(["mcp", "run", "mcp-broken", "slow"]);
    expect((await first).code).toBe(5);
    expect(second.code).toBe(5);
    // The second ran its own two seconds only after the first had ended.
    expect(firstEnded).toBeGreaterThan(0);
    expect(Date.now() - firstEnded).toBeGreaterThanOrEqual(1500);
    expect((await servers()).find((s) => s.key === "mcp-broken:slow")).toMatchObject({
      failedStarts: 2,
      lastStart: { ok: false, exitCode: 5, reason: "slow: gave up after its first start" },
    });
  });

  it("a definition changed in the installed folder is refused; an update that changes it needs the owner's consent", async () => {
    const installedManifest = join(home, "apps", "mcp-notes", "app.json");
    const original = readFileSync(installedManifest, "utf8");
    const edited = JSON.parse(original);
    edited.mcpServers.notes.args = ["mcp-server.mjs", "--extra"];
    writeFileSync(installedManifest, JSON.stringify(edited));
    try {
      const refused = await cli(["mcp", "run", "mcp-notes", "notes"]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("mcp_definition_changed");
    } finally {
      writeFileSync(installedManifest, original);
    }
    const sourceManifest = JSON.parse(readFileSync(join(source, "app.json"), "utf8"));
    sourceManifest.mcpServers.notes.env = { NOTES_GREETING: "x", NOTES_TOKEN: "y" };
    writeFileSync(join(source, "app.json"), JSON.stringify(sourceManifest));
    const update = await post("/api/apps/mcp-notes/update", { source });
    expect(update.status).toBe(409);
    const body = (await update.json()) as { error: { code: string; detail: unknown } };
    expect(body.error.code).toBe("consent_required");
    expect(JSON.stringify(body.error.detail)).toContain('"field":"mcpServers"');
    writeFileSync(join(source, "app.json"), readFileSync(join(fixture, "app.json")));
  });

  it("a job fires on its schedule as a signed request naming the job, its history shows, and missed fires run once", async () => {
    const [job] = await jobs();
    expect(job).toMatchObject({
      name: "tick",
      schedule: "0 3 * * *",
      timezone: "UTC",
      route: "/jobs/tick",
      timeoutSeconds: 10,
      paused: false,
      history: [],
    });
    const due = Date.parse(job!.nextFire);
    expect(new Date(due).getUTCHours()).toBe(3);
    expect(due).toBeGreaterThan(Date.now());

    expect((await jobs(due - 60_000))[0]!.history).toHaveLength(0);
    const fired = (await jobs(due + 1_000))[0]!;
    expect(fired.history).toHaveLength(1);
    expect(fired.history[0]).toMatchObject({
      outcome: "ok",
      status: 200,
      error: null,
      scheduledFor: new Date(due).toISOString(),
    });
    expect(Date.parse(fired.nextFire)).toBe(due + 24 * 3600_000);
    // The same moment again fires nothing more; three missed days fire once.
    expect((await jobs(due + 2_000))[0]!.history).toHaveLength(1);
    expect((await jobs(due + 3 * 24 * 3600_000 + 5_000))[0]!.history).toHaveLength(2);

    const ticks = await gw.fetch("/apps/mcp-notes/api/ticks");
    expect(ticks.status).toBe(200);
    const seen = ((await ticks.json()) as { ticks: Array<{ job: string }> }).ticks;
    expect(seen.map((t) => t.job)).toEqual(["tick", "tick"]);
    const cliJobs = await cli(["apps", "jobs", "mcp-notes", "--json"]);
    expect(cliJobs.code).toBe(0);
    expect(JSON.parse(cliJobs.stdout).jobs[0].history).toHaveLength(2);
  });

  it("registering again keeps the owner's own flags on the app's entry and rewrites only what PersonalClaw writes", async () => {
    const withFlag = mcpJson();
    withFlag.mcpServers["mcp-notes:notes"]!.autoApprove = ["echo"];
    withFlag.mcpServers["mcp-notes:notes"]!.args = ["tampered"];
    writeFileSync(mcpJsonPath(), JSON.stringify(withFlag));
    expect((await post("/api/apps/mcp-notes/enable")).status).toBe(200);
    expect(mcpJson().mcpServers["mcp-notes:notes"]).toEqual({
      autoApprove: ["echo"],
      command: join(repoRoot, "bin", "personalclaw.mjs"),
      args: ["mcp", "run", "mcp-notes", "notes", "--home", home],
    });
  });

  it("disabling removes the app's entry from mcp.json, ends a server an agent is connected to and `mcp run` refuses; its job does not fire while disabled; enabling brings both back", async () => {
    const live = await connect("mcp-notes:notes");
    const closed = closedWithin(live.client, 20_000);
    expect(await callText(live.client, "echo", { text: "before" })).toBe("hello from mcp-notes: before");
    const before = (await jobs())[0]!.history.length;
    expect((await post("/api/apps/mcp-notes/disable")).status).toBe(200);
    expect(await closed).toBe(true);
    expect(live.stderr()).toContain("ending mcp-notes:notes: the app was disabled");
    const file = mcpJson();
    expect(file.mcpServers["mcp-notes:notes"]).toBeUndefined();
    expect(file.mcpServers["owner-tool"]).toEqual(OWNER_ENTRIES["owner-tool"]);
    expect(file.mcpServers["mcp-notes:custom"]).toEqual(OWNER_ENTRIES["mcp-notes:custom"]);
    const refused = await cli(["mcp", "run", "mcp-notes", "notes"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("app_disabled");
    const paused = (await jobs(Date.now() + 30 * 24 * 3600_000))[0]!;
    expect(paused).toMatchObject({ paused: true, nextFire: null });
    expect(paused.history).toHaveLength(before);

    expect((await post("/api/apps/mcp-notes/enable")).status).toBe(200);
    expect(mcpJson().mcpServers["mcp-notes:notes"]).toMatchObject({
      args: ["mcp", "run", "mcp-notes", "notes", "--home", home],
    });
    const back = (await jobs())[0]!;
    expect(Date.parse(back.nextFire)).toBeGreaterThan(Date.now());
    expect(back.history).toHaveLength(before);
  });

  it("an update ends a server started for the version before it before it copies data/, and none starts until it is over", async () => {
    const live = await connect("mcp-notes:notes");
    const closed = closedWithin(live.client, 20_000);
    let closedAt: number | null = null;
    void closed.then(() => (closedAt = Date.now()));
    expect(await callText(live.client, "echo", { text: "before" })).toBe("hello from mcp-notes: before");
    // The same disclosure, new bytes: no consent is asked, but it is another install.
    const manifest = JSON.parse(readFileSync(join(source, "app.json"), "utf8"));
    writeFileSync(join(source, "app.json"), JSON.stringify({ ...manifest, version: "0.1.1" }));
    try {
      const update = await post("/api/apps/mcp-notes/update", { source });
      const answeredAt = Date.now();
      expect(update.status, await update.clone().text()).toBe(200);
      expect(await closed).toBe(true);
      // Ended by the update itself, not by its next question to the gateway afterwards.
      expect(closedAt).not.toBeNull();
      expect(closedAt!).toBeLessThanOrEqual(answeredAt);
      expect(live.stderr()).toContain("ending mcp-notes:notes: the app is being updated");
      // The hold is gone with the update, and its run's record with the run.
      expect(readdirSync(join(home, "run", "mcp"))).not.toContain("mcp-notes.hold");
      expect(readdirSync(join(home, "run", "mcp", "mcp-notes"))).toEqual([]);
      // A new start runs the new version.
      const again = await connect("mcp-notes:notes");
      expect(await callText(again.client, "echo", { text: "after" })).toBe("hello from mcp-notes: after");
      await again.client.close();
    } finally {
      writeFileSync(join(source, "app.json"), readFileSync(join(fixture, "app.json")));
    }
  });

  it("uninstall removes the app's jobs first and its mcp.json entry, and leaves the owner's entries", async () => {
    const removed = await gw.fetch("/api/apps/mcp-notes", { method: "DELETE", headers: json, body: "{}" });
    expect(removed.status).toBe(200);
    expect((await gw.fetch("/api/apps/mcp-notes/jobs")).status).toBe(404);
    const file = mcpJson();
    expect(file.mcpServers["mcp-notes:notes"]).toBeUndefined();
    expect(file.mcpServers["owner-tool"]).toEqual(OWNER_ENTRIES["owner-tool"]);
    expect(file.mcpServers["mcp-notes:custom"]).toEqual(OWNER_ENTRIES["mcp-notes:custom"]);
    const events = await gw.fetch("/api/security/events?kind=app_uninstalled");
    const rows = ((await events.json()) as { events: Array<{ subject: string; detail: Record<string, unknown> }> })
      .events;
    expect(rows.find((r) => r.subject === "mcp-notes")?.detail).toMatchObject({ jobs_removed: 1 });
    const refused = await cli(["mcp", "run", "mcp-notes", "notes"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("mcp_server_not_found");
  });

  it("a server reaches only its grant's hosts, through an egress broker `mcp run` starts; without a grant it has no network", async () => {
    let hits = 0;
    const upstream = http.createServer((req, res) => {
      hits += 1;
      res.end(`upstream saw ${req.url}`);
    });
    await new Promise<void>((r) => upstream.listen(0, "127.0.0.2", r));
    const port = (upstream.address() as AddressInfo).port;
    try {
      const online = join(root, "mcp-online");
      cpSync(fixture, online, { recursive: true });
      const onlineManifest = JSON.parse(readFileSync(join(online, "app.json"), "utf8"));
      Object.assign(onlineManifest, {
        name: "mcp-online",
        permissions: { ...onlineManifest.permissions, network: ["127.0.0.2:*"] },
      });
      writeFileSync(join(online, "app.json"), JSON.stringify(onlineManifest));
      await install(home, online, { HOME: ownerHome });
      const { client } = await connect("mcp-online:notes");
      try {
        const allowed = JSON.parse(await callText(client, "fetch_text", { url: `http://127.0.0.2:${port}/granted` }));
        expect(allowed).toEqual({ status: 200, body: "upstream saw /granted" });
        const refused = await client.callTool({
          name: "fetch_text",
          arguments: { url: `http://127.0.0.3:${port}/not-granted` },
        });
        // The broker answers for a host outside the grant; the upstream never sees the request.
        expect(JSON.stringify(refused.content)).not.toContain("upstream saw");
      } finally {
        await client.close();
      }
      expect(hits).toBe(1);
      const events = await gw.fetch("/api/security/events?kind=egress_allowed");
      const rows = ((await events.json()) as { events: Array<{ principal: string; subject: string }> }).events;
      expect(rows.some((r) => r.principal === "app:mcp-online" && r.subject === `127.0.0.2:${port}`)).toBe(true);

      // mcp-notes has no grant (installed again when an earlier test removed it). mcp-online goes
      // first: installed earlier, it would keep the tool names both offer (a name conflict).
      const gone = await gw.fetch("/api/apps/mcp-online", { method: "DELETE", headers: json, body: "{}" });
      expect(gone.status).toBe(200);
      if ((await gw.fetch("/api/apps/mcp-notes")).status === 404) await install(home, fixture, { HOME: ownerHome });
      const offline = await connect("mcp-notes:notes");
      try {
        const result = await offline.client.callTool({
          name: "fetch_text",
          arguments: { url: `http://127.0.0.2:${port}/no-grant` },
        });
        expect(result.isError).toBe(true);
      } finally {
        await offline.client.close();
      }
      expect(hits).toBe(1);
    } finally {
      upstream.close();
    }
  });

  it("jobs and their next fire outlive a gateway restart, and fires missed while it was down run once", async () => {
    if ((await gw.fetch("/api/apps/mcp-notes")).status === 404) await install(home, fixture, { HOME: ownerHome });
    const [before] = await jobs();
    const due = Date.parse(before!.nextFire);
    expect(await gw.stop()).toBe(0);
    gw = await startGateway({ home, env: { HOME: ownerHome } });
    await waitForRow(gw, "mcp-notes", (row) => row.healthy);
    const [after] = await jobs();
    expect(after!.nextFire).toBe(before!.nextFire);
    // Down for a week: one fire, not seven.
    const caughtUp = (await jobs(due + 7 * 24 * 3600_000 + 1_000))[0]!;
    expect(caughtUp.history.length - before!.history.length).toBe(1);
    expect(caughtUp.history[0]).toMatchObject({
      outcome: "ok",
      status: 200,
      scheduledFor: new Date(due).toISOString(),
    });
  });

  it(
    "without the injectable clock, the Durable Object's alarm fires a job on its schedule",
    { timeout: 120_000 },
    async () => {
      // The same app every minute, under another name: the real clock and the real alarm.
      const ticker = join(root, "mcp-ticker");
      cpSync(fixture, ticker, { recursive: true });
      const tickerManifest = JSON.parse(readFileSync(join(ticker, "app.json"), "utf8"));
      Object.assign(tickerManifest, {
        name: "mcp-ticker",
        crons: [{ name: "tick", schedule: "* * * * *", route: "/jobs/tick", timeoutSeconds: 10 }],
      });
      writeFileSync(join(ticker, "app.json"), JSON.stringify(tickerManifest));
      await install(home, ticker, { HOME: ownerHome });
      await waitForRow(gw, "mcp-ticker", (row) => row.healthy);
      const deadline = Date.now() + 90_000;
      let history: Array<Record<string, unknown>> = [];
      while (Date.now() < deadline) {
        const answer = await gw.fetch("/api/apps/mcp-ticker/jobs");
        history = ((await answer.json()) as { jobs: Array<{ history: Array<Record<string, unknown>> }> }).jobs[0]!
          .history;
        // A fire is in the history from before its request goes out: wait for one that answered.
        // A fire due in the very second the install settles can miss the backend (seen once in a
        // full run: failed, no status); the next minute's fire is the one that proves the alarm.
        if (history.some((run) => run.outcome === "ok")) break;
        await new Promise((r) => setTimeout(r, 1000));
      }
      expect(history[0]).toMatchObject({ outcome: "ok", status: 200 });
      expect(history.length).toBeLessThanOrEqual(2);
    },
  );
});
