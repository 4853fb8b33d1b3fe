// A real filesystem MCP server given one folder of the owner's, end to end (issue 37): the real
// `personalclaw start`, the real CLI, a local npm registry stand-in serving the vendored closure
// of @modelcontextprotocol/server-filesystem@2025.3.28 as install.npm_registry, the confined
// installer, real bubblewrap, and the official MCP SDK client started from mcp.json as an agent
// starts it. `apps add --folder documents:read-write --arg /folders/documents` declares the need
// and points the server at where a granted folder appears; the owner grants a folder of a fake
// home; the agent lists and reads there and reaches nothing else of that home; a revocation ends
// the running server and the next connect sees no folder; a granted folder swapped for a link
// before a start refuses that start, on the server's row and in the security log.
//
// Homes live under /var/tmp, not /tmp: the sandbox gives every child a private /tmp.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync } from "node:fs";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, startGateway, type RunningGateway } from "./helpers/gateway";
import { startNpmRegistry, type NpmRegistryStandIn } from "./helpers/npm-registry";
// @ts-expect-error a bundled ES module without types
import { Client, StdioClientTransport } from "./fixtures/mcp-client-sdk.mjs";
import { allowEveryTool } from "./helpers/mcp-tool-policy";

const SPEC = "npm:@modelcontextprotocol/server-filesystem@2025.3.28";
const APP = "server-filesystem";
const KEY = `${APP}:${APP}`;
const FLAGS = ["--folder", "documents:read-write", "--arg", "/folders/documents"];

interface ToolAnswer {
  isError?: boolean;
  content: Array<{ type: string; text: string }>;
}

describe("the published filesystem MCP server, given one folder", () => {
  let root: string;
  let ownerHome: string;
  let home: string;
  let documents: string;
  let privateDir: string;
  let gw: RunningGateway;
  let registry: NpmRegistryStandIn;
  const cli = (args: string[], timeoutMs = 180_000) =>
    runCli([...args, "--home", home], { HOME: ownerHome }, timeoutMs);

  let serverStderr = "";

  /**
   * Starts the client as an agent does: the command, arguments and variables of the server's
   * mcp.json entry. What `mcp run` and the server write to stderr collects in serverStderr.
   */
  async function connect(): Promise<any> {
    const entries = JSON.parse(readFileSync(join(home, "mcp.json"), "utf8")).mcpServers as Record<
      string,
      { command: string; args: string[]; env?: Record<string, string> }
    >;
    const entry = entries[KEY]!;
    const transport = new StdioClientTransport({
      command: entry.command,
      args: entry.args,
      env: { PATH: process.env.PATH!, HOME: ownerHome, ...(entry.env ?? {}) },
      stderr: "pipe",
    });
    serverStderr = "";
    transport.stderr.on("data", (chunk: Buffer) => (serverStderr += chunk.toString("utf8")));
    const client = new Client({ name: "test-agent", version: "1.0.0" });
    await client.connect(transport);
    await allowEveryTool(gw, client, ...(KEY.split(":") as [string, string]));
    return client;
  }

  /** A connect that fails: the server never answers. Answers what was written to stderr. */
  async function refusedConnect(): Promise<string> {
    await expect(connect().then((client) => client.close())).rejects.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 200));
    return serverStderr;
  }

  async function call(client: any, name: string, args: Record<string, unknown>): Promise<ToolAnswer> {
    return (await client.callTool({ name, arguments: args })) as ToolAnswer;
  }

  const text = (answer: ToolAnswer) => answer.content.map((c) => c.text).join("\n");

  async function lastStart(): Promise<{ ok: boolean; reason: string | null } | null> {
    const servers = (await (await gw.fetch("/api/mcp")).json()).servers as Array<{ key: string; lastStart: any }>;
    return servers.find((s) => s.key === KEY)?.lastStart ?? null;
  }

  async function events(kind: string): Promise<Array<{ principal: string; subject: string; detail: any }>> {
    return (await (await gw.fetch(`/api/security/events?kind=${kind}&limit=100`)).json()).events;
  }

  beforeAll(async () => {
    root = mkdtempSync("/var/tmp/pc-fs-server-");
    ownerHome = join(root, "owner");
    home = join(ownerHome, ".personalclaw");
    documents = join(ownerHome, "Documents");
    privateDir = join(ownerHome, "Private");
    for (const folder of [home, join(documents, "plans"), privateDir]) mkdirSync(folder, { recursive: true });
    writeFileSync(join(documents, "notes.txt"), "buy stamps\n");
    writeFileSync(join(documents, "plans", "spring.md"), "# Spring\n");
    writeFileSync(join(privateDir, "diary.txt"), "the owner's private diary\n");
    writeFileSync(join(ownerHome, ".netrc"), "machine example.com password hunter2\n");
    // A link the app could plant or find inside the granted folder, naming a host path outside it.
    symlinkSync(join(privateDir, "diary.txt"), join(documents, "diary-link"));
    // A root gateway's children run as nobody: the owner opens the folder to it (PersonalClaw never does).
    chmodSync(root, 0o755);
    chmodSync(ownerHome, 0o755);
    chmodSync(documents, 0o777);
    chmodSync(join(documents, "plans"), 0o777);
    chmodSync(privateDir, 0o755);
    registry = await startNpmRegistry();
    writeFileSync(join(home, "config.json"), JSON.stringify({ install: { npm_registry: registry.url } }));
    gw = await startGateway({ home, env: { HOME: ownerHome } });
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    await registry?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("the review shows the folder need naming the package and the server's argument; nothing installs without consent", async () => {
    const twice = await cli(["apps", "add", SPEC, "--folder", "documents", "--folder", "Documents:read-write"]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain("--folder names the need 'Documents' twice");
    const shown = await cli(["apps", "add", SPEC, ...FLAGS]);
    expect(shown.code, shown.stderr).toBe(1);
    expect(shown.stderr).toContain(
      `Asks for folders you choose: documents (read-write): The MCP server of ${SPEC} reads and changes the folder you grant here; it sees it at /folders/documents.`,
    );
    expect(shown.stderr).toContain(
      `${APP}: node node_modules/@modelcontextprotocol/server-filesystem/dist/index.js /folders/documents (env`,
    );
    expect(shown.stderr).toContain("consent_required");
    // The retry generates the same bytes: the same flags, in the same order.
    expect(shown.stderr).toContain(
      `apps add ${SPEC} --folder documents:read-write --arg /folders/documents --consent sha256:`,
    );
    expect(existsSync(join(home, "apps", APP))).toBe(false);
  });

  it("installed, it declares the need and sees no folder until the owner grants one", async () => {
    const added = await cli(["apps", "add", SPEC, ...FLAGS, "--yes"], 300_000);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain(`Installed ${APP} 2025.3.28`);
    const listed = await cli(["apps", "folders", APP, "--json"]);
    expect(JSON.parse(listed.stdout).folders.map((f: any) => [f.name, f.access, f.inside, f.grant])).toEqual([
      ["documents", "read-write", "/folders/documents", null],
    ]);
    // The server checks its folder at start: with nothing granted there is none, and it ends.
    expect(await refusedConnect()).toContain("Error accessing directory /folders/documents");
    await expect.poll(async () => (await lastStart())?.ok, { timeout: 10_000 }).toBe(false);
  }, 360_000);

  it("granted, an agent lists and reads the folder, writes into it, and reaches nothing else of the owner's home", async () => {
    const set = await cli(["apps", "folders", APP, "set", "documents", documents, "--read-write", "--json"]);
    expect(set.code, set.stdout + set.stderr).toBe(0);
    const client = await connect();
    try {
      const tools = (await client.listTools()).tools.map((t: { name: string }) => t.name);
      expect(tools).toEqual(expect.arrayContaining(["read_file", "list_directory", "write_file"]));
      expect(text(await call(client, "list_allowed_directories", {}))).toContain("/folders/documents");
      const listing = await call(client, "list_directory", { path: "/folders/documents" });
      expect(listing.isError ?? false).toBe(false);
      expect(text(listing)).toContain("[FILE] notes.txt");
      expect(text(listing)).toContain("[DIR] plans");
      expect(text(await call(client, "read_file", { path: "/folders/documents/notes.txt" }))).toBe("buy stamps\n");
      expect(text(await call(client, "read_file", { path: "/folders/documents/plans/spring.md" }))).toBe("# Spring\n");
      const written = await call(client, "write_file", { path: "/folders/documents/reply.txt", content: "done\n" });
      expect(written.isError ?? false, text(written)).toBe(false);
      expect(readFileSync(join(documents, "reply.txt"), "utf8")).toBe("done\n");

      // Elsewhere in the owner's home: by its host path, by ../ from the folder, through a link in it.
      for (const path of [
        join(privateDir, "diary.txt"),
        join(ownerHome, ".netrc"),
        "/folders/documents/../Private/diary.txt",
        "/folders/documents/../../owner/Private/diary.txt",
        "/folders/documents/diary-link",
      ]) {
        const refused = await call(client, "read_file", { path });
        expect(refused.isError, path).toBe(true);
        expect(text(refused), path).not.toContain("private diary");
        expect(text(refused), path).not.toContain("hunter2");
      }
      const outside = await call(client, "list_directory", { path: ownerHome });
      expect(outside.isError).toBe(true);
      expect(text(outside)).not.toContain("Private");
    } finally {
      await client.close();
    }
  }, 120_000);

  it("revoked, the running server ends and the next connect cannot see the folder", async () => {
    const client = await connect();
    let closed = false;
    client.onclose = () => (closed = true);
    expect(text(await call(client, "read_file", { path: "/folders/documents/notes.txt" }))).toBe("buy stamps\n");
    const revoked = await cli(["apps", "folders", APP, "revoke", "documents", "--json"]);
    expect(revoked.code, revoked.stdout + revoked.stderr).toBe(0);
    await expect.poll(() => closed, { timeout: 15_000 }).toBe(true);
    expect(await refusedConnect()).toContain("Error accessing directory /folders/documents");
    await expect.poll(async () => (await lastStart())?.ok, { timeout: 10_000 }).toBe(false);
    const rows = await events("folder_revoked");
    expect(rows.map((r) => [r.subject, r.detail.need, r.detail.path])).toEqual([[APP, "documents", documents]]);
  }, 60_000);

  it("a granted folder swapped for a link before `mcp run` refuses that start: the code on the server's row and a security-log row", async () => {
    const set = await cli(["apps", "folders", APP, "set", "documents", documents, "--read-write", "--json"]);
    expect(set.code, set.stdout + set.stderr).toBe(0);
    renameSync(documents, `${documents}.old`);
    symlinkSync(privateDir, documents);
    const stderr = await refusedConnect();
    expect(stderr).toContain("folder_grant_changed");
    expect(stderr).not.toContain("private diary");
    await expect
      .poll(async () => (await lastStart())?.reason ?? "", { timeout: 10_000 })
      .toContain("folder_grant_changed");
    expect((await lastStart())?.ok).toBe(false);
    const refused = (await events("mcp_start_refused")).filter((r) => r.detail.code === "folder_grant_changed");
    expect(refused.map((r) => [r.principal, r.subject, r.detail.need, r.detail.path, r.detail.via])).toEqual([
      [`app:${APP}`, KEY, "documents", documents, `mcp ${APP}`],
    ]);
  }, 60_000);
});
