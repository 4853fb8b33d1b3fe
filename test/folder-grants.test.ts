// Folder grants on the real stack (issue 37): real workerd, the real bridge, real bubblewrap and
// real files. An installed app sees none of the owner's folders until the owner grants one to a
// need it declared; then exactly that folder, at /folders/<need>, read-only unless granted
// read-write; a grant of `/`, the gateway's home, another app's folder, a link or `..` is
// refused with its code; revoking restarts the backend without it; every change is a
// security-log row with the path; an app's token reaches none of these routes; an MCP server
// sees the same grants and ends when they change.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { spawn } from "node:child_process";
import { cliPath, errorCode, gatewayPerSuite, repoRoot, runCli, type RunningGateway } from "./helpers/gateway";
import { getFromBackend, install, waitForRow } from "./helpers/backends";
import { mcpLineAgent } from "./helpers/mcp-line-agent";
import type { BackendStatus } from "../kernel/contracts/app-record";

const APP = "folder-reader";
const fixture = join(repoRoot, "test", "fixtures", "backend-apps", APP);
const json = { "content-type": "application/json" };

let owner: string;
let docs: string;
let privateDir: string;
let outbox: string;

function put(gw: RunningGateway, need: string, body: unknown, headers: Record<string, string> = {}) {
  return gw.fetch(`/api/apps/${APP}/folders/${need}`, {
    method: "PUT",
    headers: { ...json, ...headers },
    body: JSON.stringify(body),
  });
}

async function events(gw: RunningGateway, kind: string): Promise<Array<{ subject: string; detail: any }>> {
  return (await (await gw.fetch(`/api/security/events?kind=${kind}&limit=100`)).json()).events;
}

/** The backend's row once a start newer than `after` is healthy. */
async function healthyAfter(gw: RunningGateway, after: string | null): Promise<BackendStatus> {
  const row = await waitForRow(gw, APP, (r) => r.healthy && r.startedAt !== after);
  expect(row?.healthy, JSON.stringify(row)).toBe(true);
  return row!;
}

async function probe(gw: RunningGateway, row: BackendStatus, path: string) {
  const answer = await getFromBackend(gw.home, row, `/probe?path=${encodeURIComponent(path)}`);
  expect(answer.status).toBe(200);
  return JSON.parse(answer.body) as { read: unknown; list: unknown; write: unknown };
}

/** `personalclaw mcp run` of the app's server, as an agent starts it. */
function startMcp(gw: RunningGateway) {
  const child = spawn(process.execPath, [cliPath, "mcp", "run", APP, "lister", "--home", gw.home], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { process: child, exited, stderr: () => stderr, agent: mcpLineAgent(child) };
}

/** Asks the server's `look` tool, as an agent does, what it sees of /folders and of `path`. */
function askMcp(server: ReturnType<typeof startMcp>, path: string): Promise<Record<string, unknown>> {
  return server.agent.callJson("look", { path });
}

beforeAll(() => {
  // Not under /tmp would matter only for the host path check; the grants are bound by descriptor.
  owner = mkdtempSync(join("/var/tmp", "pc-owner-"));
  docs = join(owner, "Documents");
  privateDir = join(owner, "Private");
  outbox = join(owner, "Outbox");
  for (const folder of [docs, privateDir, outbox]) mkdirSync(folder);
  writeFileSync(join(docs, "report.txt"), "quarterly");
  writeFileSync(join(privateDir, "diary.txt"), "private");
  symlinkSync(join(privateDir, "diary.txt"), join(docs, "to-diary"));
  // A root gateway's children run as nobody: the owner opens these folders to it (PersonalClaw never does).
  chmodSync(owner, 0o755);
  chmodSync(docs, 0o755);
  chmodSync(outbox, 0o777);
});

afterAll(() => rmSync(owner, { recursive: true, force: true }));

describe("folder grants", () => {
  const gw = gatewayPerSuite();
  let row: BackendStatus;

  beforeAll(async () => {
    await install(gw.home, fixture);
    row = await healthyAfter(gw, null);
  });

  it("lists the declared needs with nothing granted, and the app sees none of the owner's folders", async () => {
    const listed = await runCli(["apps", "folders", APP, "--json", "--home", gw.home]);
    expect(listed.code, listed.stderr).toBe(0);
    const body = JSON.parse(listed.stdout);
    expect(body.folders.map((f: any) => [f.name, f.access, f.inside, f.grant])).toEqual([
      ["documents", "read", "/folders/documents", null],
      ["outbox", "read-write", "/folders/outbox", null],
    ]);
    expect((await probe(gw, row, "/folders")).list).toBe("ENOENT");
    expect((await probe(gw, row, docs)).list).toBe("ENOENT");
    expect(JSON.parse((await getFromBackend(gw.home, row, "/env")).body)).toEqual({});
  });

  it("an app's own token reaches its own row but none of the folder routes", async () => {
    const echo = await (await gw.fetch(`/apps/${APP}/api/echo`)).json();
    const appToken = String(echo.headers.authorization);
    expect(appToken).toMatch(/^Bearer /);
    const own = await gw.fetch(`/api/apps/${APP}`, { headers: { authorization: appToken } });
    expect(own.status).toBe(200);
    const list = await gw.fetch(`/api/apps/${APP}/folders`, { headers: { authorization: appToken } });
    expect(list.status).toBe(403);
    const grant = await put(gw, "documents", { path: docs }, { authorization: appToken });
    expect(grant.status).toBe(403);
    expect((await events(gw, "folder_granted")).length).toBe(0);
  });

  it("refuses `/`, the gateway's home, an app's folder, a link, `..`, and read-write for a read need, writing nothing", async () => {
    const link = join(owner, "docs-link");
    symlinkSync(docs, link);
    const cases: Array<[unknown, string]> = [
      [{ path: "/" }, "folder_path_refused"],
      [{ path: "/etc" }, "folder_path_refused"],
      [{ path: gw.home }, "folder_path_refused"],
      [{ path: join(gw.home, "apps", APP) }, "folder_path_refused"],
      [{ path: link }, "folder_path_link"],
      [{ path: `${docs}/../Private` }, "folder_path_invalid"],
      [{ path: join(owner, "missing") }, "folder_path_missing"],
      [{ path: docs, access: "read-write" }, "folder_grant_wider_than_need"],
    ];
    for (const [body, code] of cases) {
      const answer = await put(gw, "documents", body);
      expect([JSON.stringify(body), await errorCode(answer)]).toEqual([JSON.stringify(body), code]);
    }
    expect(await errorCode(await put(gw, "nope", { path: docs }))).toBe("folder_need_not_declared");
    const refusedRows = await events(gw, "folder_grant_refused");
    expect(refusedRows.some((r) => r.detail.path === link && r.detail.code === "folder_path_link")).toBe(true);
    const listed = await (await gw.fetch(`/api/apps/${APP}/folders`)).json();
    expect(listed.folders.every((f: any) => f.grant === null)).toBe(true);
  });

  it("a read-only grant restarts the backend, which sees exactly that folder at /folders/documents and cannot change it", async () => {
    const before = row.startedAt;
    const set = await runCli(["apps", "folders", APP, "set", "documents", docs, "--json", "--home", gw.home]);
    expect(set.code, set.stdout + set.stderr).toBe(0);
    const answer = JSON.parse(set.stdout);
    expect(answer.grant).toMatchObject({ need: "documents", path: docs, access: "read" });
    expect(answer.applied.backend).toBe("restarted");
    row = await healthyAfter(gw, before);

    const inside = await probe(gw, row, "/folders/documents");
    expect(inside.list).toEqual(["report.txt", "to-diary"]);
    expect(inside.write).toBe("EROFS");
    expect((await probe(gw, row, "/folders/documents/report.txt")).read).toBe("quarterly");
    // Beside and above it, nothing: the link inside points at a host path the box does not have.
    expect((await probe(gw, row, "/folders/documents/to-diary")).read).toBe("ENOENT");
    expect((await probe(gw, row, "/folders/documents/../outbox")).list).toBe("ENOENT");
    expect((await probe(gw, row, privateDir)).list).toBe("ENOENT");
    expect((await probe(gw, row, docs)).list).toBe("ENOENT");
    expect(JSON.parse((await getFromBackend(gw.home, row, "/env")).body)).toEqual({
      PERSONALCLAW_FOLDER_DOCUMENTS: "/folders/documents",
    });
    expect(existsSync(join(docs, "written-by-app.txt"))).toBe(false);
    const granted = await events(gw, "folder_granted");
    expect(granted.map((r) => [r.subject, r.detail.need, r.detail.path, r.detail.access])).toEqual([
      [APP, "documents", docs, "read"],
    ]);
    // The app's row says what is granted, never where it is on the host (an app reads its own row).
    const view = await (await gw.fetch(`/api/apps/${APP}`)).json();
    expect(view.folders).toEqual([
      { need: "documents", granted: true, access: "read" },
      { need: "outbox", granted: false, access: null },
    ]);
    expect(JSON.stringify(view)).not.toContain(docs);
  });

  it("a read-write grant, given only when asked for, takes the app's writes", async () => {
    const before = row.startedAt;
    const set = await runCli([
      "apps",
      "folders",
      APP,
      "set",
      "outbox",
      outbox,
      "--read-write",
      "--json",
      "--home",
      gw.home,
    ]);
    expect(set.code, set.stdout + set.stderr).toBe(0);
    row = await healthyAfter(gw, before);
    expect((await probe(gw, row, "/folders/outbox")).write).toBe("ok");
    expect(readFileSync(join(outbox, "written-by-app.txt"), "utf8")).toBe("from the app");
    expect((await probe(gw, row, "/folders/documents")).write).toBe("EROFS");
  });

  it("an MCP server sees the same grants, and ends once they change; its next start has the new view", async () => {
    const first = startMcp(gw);
    try {
      const seen = await askMcp(first, privateDir);
      expect(seen).toEqual({
        folders: ["documents", "outbox"],
        documents: ["report.txt", "to-diary"],
        asked: "ENOENT",
        env: { PERSONALCLAW_FOLDER_DOCUMENTS: "/folders/documents", PERSONALCLAW_FOLDER_OUTBOX: "/folders/outbox" },
      });
      const revoked = await gw.fetch(`/api/apps/${APP}/folders/outbox`, {
        method: "DELETE",
        headers: json,
        body: "{}",
      });
      expect(revoked.status).toBe(200);
      row = await healthyAfter(gw, row.startedAt);
      // mcp run asks whether it may go on every 2 s; the changed grants end it.
      const code = await Promise.race([first.exited, new Promise((r) => setTimeout(() => r("still running"), 10_000))]);
      expect(code).not.toBe("still running");
      expect(first.stderr()).toContain("the owner changed the app's folders");
    } finally {
      first.process.kill("SIGKILL");
    }
    const second = startMcp(gw);
    try {
      expect((await askMcp(second, "/folders/outbox")).folders).toEqual(["documents"]);
    } finally {
      second.process.kill("SIGKILL");
    }
  });

  it("revoking restarts the backend without the folder, and is logged with the path", async () => {
    const before = row.startedAt;
    const revoked = await runCli(["apps", "folders", APP, "revoke", "documents", "--json", "--home", gw.home]);
    expect(revoked.code, revoked.stdout + revoked.stderr).toBe(0);
    expect(JSON.parse(revoked.stdout)).toMatchObject({
      revoked: { need: "documents", path: docs },
      applied: { backend: "restarted" },
    });
    row = await healthyAfter(gw, before);
    expect((await probe(gw, row, "/folders/documents")).list).toBe("ENOENT");
    expect((await probe(gw, row, "/folders")).list).toBe("ENOENT");
    const rows = await events(gw, "folder_revoked");
    expect(rows.map((r) => [r.subject, r.detail.need, r.detail.path]).sort()).toEqual([
      [APP, "documents", docs],
      [APP, "outbox", outbox],
    ]);
    const again = await runCli(["apps", "folders", APP, "revoke", "documents", "--json", "--home", gw.home]);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout).error.code).toBe("folder_grant_not_found");
  });

  it("a granted folder swapped for a link while the backend runs is refused when the watchdog restarts it, and logged", async () => {
    const chosen = join(owner, "Watched");
    mkdirSync(chosen, { mode: 0o755 });
    chmodSync(chosen, 0o755);
    const set = await runCli(["apps", "folders", APP, "set", "documents", chosen, "--json", "--home", gw.home]);
    expect(set.code, set.stdout + set.stderr).toBe(0);
    row = await healthyAfter(gw, row.startedAt);
    renameSync(chosen, `${chosen}.old`);
    symlinkSync(privateDir, chosen);
    await getFromBackend(gw.home, row, "/exit");
    const refused = await waitForRow(gw, APP, (r) => (r.reason ?? "").includes("folder_grant_changed"));
    expect(refused?.running).toBe(false);
    await expect
      .poll(async () => (await events(gw, "backend_start_refused")).filter((r) => r.subject === APP).length)
      .toBe(1);
    // Taken back, the app starts again, without the folder.
    expect(
      (await gw.fetch(`/api/apps/${APP}/folders/documents`, { method: "DELETE", headers: json, body: "{}" })).status,
    ).toBe(200);
    const restarted = await gw.fetch(`/api/apps/${APP}/restart`, { method: "POST", headers: json, body: "{}" });
    expect(restarted.status).toBe(200);
    row = await healthyAfter(gw, refused?.startedAt ?? null);
    expect((await probe(gw, row, "/folders")).list).toBe("ENOENT");
  });

  it("a granted folder swapped for a link before a start is refused at that start, on the row and in the log", async () => {
    const swapped = join(owner, "Swapped");
    mkdirSync(swapped, { mode: 0o755 });
    chmodSync(swapped, 0o755);
    const set = await runCli(["apps", "folders", APP, "set", "documents", swapped, "--json", "--home", gw.home]);
    expect(set.code, set.stdout + set.stderr).toBe(0);
    await healthyAfter(gw, row.startedAt);
    renameSync(swapped, `${swapped}.old`);
    symlinkSync(privateDir, swapped);
    const restart = await gw.fetch(`/api/apps/${APP}/restart`, { method: "POST", headers: json, body: "{}" });
    expect(await errorCode(restart)).toBe("app_restart_failed");
    const refused = await waitForRow(gw, APP, (r) => !r.running && (r.reason ?? "").includes("folder_grant_changed"));
    expect(refused?.reason ?? "").toContain("folder_grant_changed");
    const rows = await events(gw, "backend_start_refused");
    expect(rows.some((r) => r.subject === APP && r.detail.code === "folder_grant_changed")).toBe(true);
  });

  it("uninstalling forgets every grant: installed again, the app has none and sees no folder", async () => {
    const uninstalled = await runCli(["apps", "uninstall", APP, "--json", "--home", gw.home]);
    expect(uninstalled.code, uninstalled.stdout + uninstalled.stderr).toBe(0);
    await install(gw.home, fixture);
    const listed = await (await gw.fetch(`/api/apps/${APP}/folders`)).json();
    expect(listed.folders.map((f: any) => f.grant)).toEqual([null, null]);
    row = await healthyAfter(gw, null);
    expect((await probe(gw, row, "/folders")).list).toBe("ENOENT");
  });
});
