// Backup and restore of the whole gateway (docs/backup-and-restore.md), end to end: a real
// gateway with a confined Python backend writing rows into data/app.db the whole time and holding
// an assigned secret, a Node backend with notes in data/, and the published filesystem MCP server
// (`apps add npm:...` from the local registry stand-in, its pinned npm closure installed
// confined) given one folder of the owner's, is backed up while it runs; the archive is refused
// when a byte is flipped or the passphrase is wrong, a replace is refused on a running gateway,
// and a replace into a fresh home on another port — the registry gone — gives back the apps with
// their data, the secret, the MCP server with its closure installed again from the archive and
// its folder grant (reported while the folder is missing, refused rather than widened), and a
// security log that continues its chain and extends the archived checkpoint offline.
//
// The homes live under /var/tmp, not /tmp: the sandbox gives every child a private /tmp.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { repoRoot, runCli, startGateway, type RunningGateway } from "./helpers/gateway";
import { appTokenOf, install, waitForRow } from "./helpers/backends";
import { APP, dbRows, expectNoRowLost, proxied, sleep, waitHealthy, writeProbe, type Json } from "./helpers/probe-app";
import { OpenedArchive } from "../host-bridge/durability/archive-reader";
import { startNpmRegistry, type NpmRegistryStandIn } from "./helpers/npm-registry";
import { agentFromMcpJson, type McpAgent } from "./helpers/mcp-agent";
import { allowEveryTool } from "./helpers/mcp-tool-policy";

const PASSPHRASE = "correct horse battery staple";
const SECRET_VALUE = "probe-secret-value-7d1f3c";
const NOTE_TEXT = "a note the restore must bring back";
/** 12 800 rows of 4 KiB: a 50 MB database. */
const BIG_ROWS = 12_800;
const FS_SPEC = "npm:@modelcontextprotocol/server-filesystem@2025.3.28";
const FS_APP = "server-filesystem";
const FS_KEY = `${FS_APP}:${FS_APP}`;

/** A tool's answer as text. */
async function toolText(agent: McpAgent, name: string, args: Record<string, unknown>): Promise<string> {
  const answer = (await agent.client.callTool({ name, arguments: args })) as { content: Array<{ text: string }> };
  return answer.content.map((c) => c.text).join("\n");
}

/** A file of the home, counted as the test sees it (a restore must not have written into a home it refused). */
function listing(home: string): string[] {
  if (!existsSync(home)) return [];
  return readdirSync(home, { recursive: true }).map(String).sort();
}

function integrityOf(path: string): string {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return String(db.pragma("integrity_check", { simple: true }));
  } finally {
    db.close();
  }
}

function countOf(path: string, table: string): number {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  } finally {
    db.close();
  }
}

describe("backup and restore of the whole gateway", () => {
  let gw: RunningGateway;
  let restored: RunningGateway | null = null;
  let root: string;
  let archive: string;
  let passFile: string;
  let rowsAtBackup = 0;
  let ownerToken = "";
  let approvalId = "";
  let ownerHome: string;
  let documents: string;
  let registry: NpmRegistryStandIn | null = null;
  const replaceInto = (target: string, ...flags: string[]) =>
    runCli(["restore", archive, "--mode", "replace", "--passphrase-file", passFile, ...flags, "--home", target]);

  beforeAll(async () => {
    root = mkdtempSync("/var/tmp/pc-backup-");
    passFile = join(root, "pass");
    writeFileSync(passFile, `${PASSPHRASE}\n`);
    // The owner's home with one folder to grant; a root gateway's children run as nobody, so the owner opens it to them.
    ownerHome = join(root, "owner");
    documents = join(ownerHome, "Documents");
    mkdirSync(documents, { recursive: true });
    writeFileSync(join(documents, "notes.txt"), "buy stamps\n");
    for (const folder of [root, ownerHome]) chmodSync(folder, 0o755);
    chmodSync(documents, 0o777);
    registry = await startNpmRegistry();
    const home = join(root, "home");
    mkdirSync(home, { mode: 0o700 });
    writeFileSync(join(home, "config.json"), JSON.stringify({ install: { npm_registry: registry.url } }));
    gw = await startGateway({ home, env: { HOME: ownerHome } });
    const added = await runCli(
      [
        "apps",
        "add",
        FS_SPEC,
        "--folder",
        "documents:read-write",
        "--arg",
        "/folders/documents",
        "--yes",
        "--home",
        home,
      ],
      { HOME: ownerHome },
      300_000,
    );
    expect(added.code, added.stderr).toBe(0);
    const granted = await runCli(
      ["apps", "folders", FS_APP, "set", "documents", documents, "--read-write", "--json", "--home", home],
      { HOME: ownerHome },
    );
    expect(granted.code, granted.stdout + granted.stderr).toBe(0);
    const agent = await agentFromMcpJson(home, FS_KEY, ownerHome);
    try {
      await allowEveryTool(gw, agent.client, FS_APP, FS_APP);
      expect(await toolText(agent, "read_file", { path: "/folders/documents/notes.txt" })).toBe("buy stamps\n");
    } finally {
      await agent.close();
    }
    const secrets = [{ name: "PROBE_API_KEY", why: "the backup suite gives it one" }];
    await install(gw.home, await writeProbe(root, "1.0.0", { secrets }));
    await install(gw.home, join(repoRoot, "apps", "fixtures", "node-notes"));
    const json = { "content-type": "application/json" };
    const put = await gw.fetch("/api/secrets/PROBE_API_KEY", {
      method: "PUT",
      headers: json,
      body: JSON.stringify({ value: SECRET_VALUE }),
    });
    expect(put.status).toBe(200);
    const assign = await gw.fetch("/api/secrets/PROBE_API_KEY/assign", {
      method: "POST",
      headers: json,
      body: JSON.stringify({ app: APP }),
    });
    expect(assign.status).toBe(200);
    expect((await gw.fetch(`/api/apps/${APP}/restart`, { method: "POST", headers: json, body: "{}" })).status).toBe(
      200,
    );
    await waitHealthy(gw);
    // 50 MB more in the probe's own database, beside the rows its backend goes on writing.
    const big = new Database(join(gw.home, "apps", APP, "data", "app.db"), { timeout: 10_000 });
    big.exec("CREATE TABLE big (id INTEGER PRIMARY KEY, body BLOB)");
    const insert = big.prepare("INSERT INTO big (body) VALUES (randomblob(4096))");
    big.transaction(() => {
      for (let i = 0; i < BIG_ROWS; i++) insert.run();
    })();
    big.close();
    const note = await gw.fetch("/apps/node-notes/api/notes", {
      method: "POST",
      headers: json,
      body: JSON.stringify({ text: NOTE_TEXT }),
    });
    expect(note.status).toBe(201);
    expect((await proxied(gw)).body?.secret).toBe(true);
    // A pending approval, asked as an internal process asks one.
    const raised = await gw.fetch("/api/approvals", {
      method: "POST",
      owner: false,
      headers: {
        ...json,
        "x-internal-secret": readFileSync(join(gw.home, ".local_secret"), "utf8").trim(),
        "x-personalclaw-work": "backup-suite",
      },
      body: JSON.stringify({
        kind: "notes.publish",
        title: "Publish a note",
        action: { route: "POST /notes/publish", target: "note-1", arguments_digest: `sha256:${"a".repeat(64)}` },
      }),
    });
    expect(raised.status, await raised.clone().text()).toBe(201);
    approvalId = ((await raised.json()) as { approval: { id: string } }).approval.id;
    // A sign-in the owner made with `personalclaw token`: a session the restore must bring along.
    const minted = await runCli(["token", "--ttl", "7d", "--json", "--home", gw.home]);
    expect(minted.code, minted.stderr).toBe(0);
    ownerToken = new URL((JSON.parse(minted.stdout) as { url: string }).url).searchParams.get("token")!;
    // Two thousand rows more in the security log, through the bridge's own door to it.
    const secret = readFileSync(join(gw.home, ".local_secret"), "utf8").trim();
    for (let batch = 0; batch < 40; batch++) {
      const appended = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          gw.fetch("/api/internal/sel/append", {
            method: "POST",
            owner: false,
            headers: { ...json, "x-internal-secret": secret, "x-personalclaw-work": "gateway" },
            body: JSON.stringify({
              kind: "backup_suite_row",
              principal: "gateway",
              outcome: "info",
              subject: `row ${batch * 50 + i}`,
            }),
          }),
        ),
      );
      expect(appended.map((r) => r.status)).toEqual(Array(50).fill(200));
    }
  }, 300_000);

  afterAll(async () => {
    await restored?.stop();
    await gw?.stop();
    await registry?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it("writes one archive while the probe writes, sealed: no secret value, no note and no -wal in it", async () => {
    archive = join(root, "home.pcbackup");
    await sleep(500); // the probe has written rows for a while
    const result = await runCli([
      "backup",
      "--out",
      archive,
      "--passphrase-file",
      passFile,
      "--json",
      "--home",
      gw.home,
    ]);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as Json;
    expect(summary.apps).toEqual(expect.arrayContaining([APP, "node-notes"]));
    rowsAtBackup = dbRows(gw.home).length;
    const bytes = readFileSync(archive);
    expect(bytes.includes(Buffer.from(SECRET_VALUE))).toBe(false);
    expect(bytes.includes(Buffer.from(NOTE_TEXT))).toBe(false);
    expect(bytes.includes(Buffer.from("SQLite format 3"))).toBe(false);
    const opened = await OpenedArchive.open(archive);
    try {
      const paths = opened.manifest.parts.map((p) => p.path);
      expect(paths).toContain(`apps/${APP}/data/app.db`);
      expect(paths).toContain("apps/node-notes/data/notes.json");
      expect(paths.filter((p) => /-(wal|shm)$/.test(p) || p.includes("/venv/") || p.startsWith("logs/"))).toEqual([]);
      expect(paths).not.toContain(".local_secret");
      // The npm closure's tarballs are carried (npm's cache, by integrity); what npm installed is not.
      const modules = paths.filter((p) => p.startsWith(`apps/${FS_APP}/node_modules/`));
      expect(modules.length).toBeGreaterThan(0);
      expect(modules.filter((p) => !p.startsWith(`apps/${FS_APP}/node_modules/.personalclaw-npm-cache/`))).toEqual([]);
      expect(opened.manifest.apps.find((a) => a.name === FS_APP)?.packages).toEqual(["npm-closure:npm-closure.json"]);
      for (const part of opened.manifest.parts) expect(part.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(opened.manifest.log.head.seq).toBeGreaterThan(0);
    } finally {
      await opened.close();
    }
    // Nothing but the archive was left beside it.
    expect(readdirSync(root).filter((f) => f.includes("partial"))).toEqual([]);
  }, 120_000);

  it("checks the archive and prints the plan without a mode, writing nothing", async () => {
    const target = join(mkdtempSync(join(tmpdir(), "pc-restore-")), "home");
    const result = await runCli(["restore", archive, "--passphrase-file", passFile, "--json", "--home", target]);
    expect(result.code, result.stderr).toBe(0);
    const answer = JSON.parse(result.stdout) as Json;
    expect(answer.verified).toBe(true);
    expect(answer.plan.apps.map((a: Json) => a.name)).toEqual(expect.arrayContaining([APP, "node-notes"]));
    expect(answer.plan.secrets).toEqual([{ name: "PROBE_API_KEY", in_home: false }]);
    expect(existsSync(target)).toBe(false);
  }, 60_000);

  it("refuses an archive with one byte flipped, in a part or in its manifest, before writing anything", async () => {
    const opened = await OpenedArchive.open(archive);
    const dataPart = opened.manifest.parts.find((p) => p.path === `apps/${APP}/data/app.db`)!;
    await opened.close();
    const original = readFileSync(archive);
    for (const at of [dataPart.offset + Math.floor(dataPart.size / 2), original.length - 100]) {
      const flipped = Buffer.from(original);
      flipped[at] = flipped[at]! ^ 0x01;
      const tampered = join(root, `tampered-${at}.pcbackup`);
      writeFileSync(tampered, flipped);
      const target = join(mkdtempSync(join(tmpdir(), "pc-restore-")), "home");
      const result = await runCli([
        "restore",
        tampered,
        "--mode",
        "replace",
        "--passphrase-file",
        passFile,
        "--json",
        "--home",
        target,
      ]);
      expect(result.code).toBe(1);
      expect(JSON.parse(result.stdout).error.code).toBe("archive_invalid");
      expect(existsSync(target)).toBe(false);
    }
  }, 60_000);

  it("refuses a wrong passphrase with archive_passphrase_wrong, writing nothing", async () => {
    const wrong = join(root, "wrong");
    writeFileSync(wrong, "not the passphrase\n");
    const target = join(mkdtempSync(join(tmpdir(), "pc-restore-")), "home");
    const result = await runCli([
      "restore",
      archive,
      "--mode",
      "replace",
      "--passphrase-file",
      wrong,
      "--json",
      "--home",
      target,
    ]);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout).error.code).toBe("archive_passphrase_wrong");
    expect(existsSync(target)).toBe(false);
  }, 60_000);

  it("refuses to replace the home of a running gateway with gateway_running, naming the stop command", async () => {
    const before = listing(join(gw.home, "apps"));
    const result = await runCli([
      "restore",
      archive,
      "--mode",
      "replace",
      "--passphrase-file",
      passFile,
      "--home",
      gw.home,
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("(gateway_running)");
    expect(result.stderr).toContain("stop");
    expect(listing(join(gw.home, "apps"))).toEqual(before);
    expect(readdirSync(join(gw.home, "..")).filter((f) => f.includes(".restore"))).toEqual([]);
  }, 60_000);

  it("an app token never reaches the backup, the merge or the packages route", async () => {
    const token = await appTokenOf(gw, "node-notes");
    for (const [path, body] of [
      ["/api/durability/backup", { passphrase: PASSPHRASE }],
      ["/api/durability/merge", { apps: [] }],
      ["/api/durability/packages", {}],
    ] as const) {
      const response = await gw.fetch(path, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(response.status, path).toBe(403);
      expect(response.headers.get("content-type")).toContain("application/json");
    }
  }, 60_000);

  it("a sign-in older than ten minutes is refused fresh_sign_in_required, and no archive is written", async () => {
    const backups = join(gw.home, "run", "backups");
    const before = existsSync(backups) ? readdirSync(backups) : [];
    const response = await gw.fetch("/api/durability/backup", {
      method: "POST",
      headers: {
        authorization: `Bearer ${ownerToken}`,
        "content-type": "application/json",
        "x-test-now": String(Date.now() + 11 * 60 * 1000),
      },
      body: JSON.stringify({ passphrase: PASSPHRASE }),
    });
    expect(response.status).toBe(401);
    expect(((await response.json()) as Json).error.code).toBe("fresh_sign_in_required");
    expect(existsSync(backups) ? readdirSync(backups) : []).toEqual(before);
  }, 60_000);

  it("merges into a running gateway that has one of the apps: that app keeps its data, the absent ones arrive with their data, secret and packages", async () => {
    const other = await startGateway();
    try {
      await install(other.home, join(repoRoot, "apps", "fixtures", "node-notes"));
      await waitForRow(other, "node-notes", (b) => b.running && b.healthy, 30_000);
      const json = { "content-type": "application/json" };
      const own = await other.fetch("/apps/node-notes/api/notes", {
        method: "POST",
        headers: json,
        body: JSON.stringify({ text: "this home's own note" }),
      });
      expect(own.status).toBe(201);
      const asked = registry!.requests.length;
      const result = await runCli([
        "restore",
        archive,
        "--mode",
        "merge",
        "--passphrase-file",
        passFile,
        "--json",
        "--home",
        other.home,
      ]);
      expect(result.code, result.stderr + result.stdout).toBe(0);
      const items = (JSON.parse(result.stdout) as { items: Json[] }).items;
      const outcome = (item: string) => items.find((i) => i.item === item)?.outcome;
      expect(outcome("app node-notes")).toBe("unchanged");
      expect(outcome(`app ${APP}`)).toBe("merged");
      expect(outcome("secret PROBE_API_KEY")).toBe("copied");
      expect(outcome(`secret PROBE_API_KEY for ${APP}`)).toBe("merged");
      // The MCP server whose install fetched its npm closure arrives too: its closure installed
      // again, confined, from the tarballs the archive carried, before anything starts it.
      expect(outcome(`app ${FS_APP}`)).toBe("merged");
      expect(items.find((i) => i.item === `packages for ${FS_APP}`)).toEqual({
        item: `packages for ${FS_APP}`,
        outcome: "merged",
        why: "installed confined from the pinned files the archive carried, their hashes checked",
      });
      expect(existsSync(join(other.home, "restore-packages.json"))).toBe(false);
      expect(registry!.requests.slice(asked).filter((r) => r.endsWith(".tgz"))).toEqual([]);
      expect(existsSync(join(other.home, "apps", FS_APP, "node_modules", "@modelcontextprotocol"))).toBe(true);
      const restoredRows = (await (
        await other.fetch("/api/security/events?kind=app_packages_restored&limit=10")
      ).json()) as { events: Json[] };
      expect(restoredRows.events.map((e) => e.subject)).toEqual([FS_APP]);
      const agent = await agentFromMcpJson(other.home, FS_KEY, ownerHome);
      try {
        // Its tool pins and policy are this home's to make: pinned at this first listing, then allowed.
        await allowEveryTool(other, agent.client, FS_APP, FS_APP);
        expect(await toolText(agent, "read_file", { path: "/folders/documents/notes.txt" })).toBe("buy stamps\n");
      } finally {
        await agent.close();
      }
      const notes = (await (await other.fetch("/apps/node-notes/api/notes")).json()) as { notes: Json[] };
      expect(notes.notes.map((n) => n.text)).toEqual(["this home's own note"]);
      await waitHealthy(other);
      const state = await proxied(other);
      expect(state.body?.secret).toBe(true);
      expect(state.body?.rows).toBeGreaterThan(0);
      expectNoRowLost(dbRows(other.home), "1.0.0");
      // The copied secret is sealed to this home's key, not the archive's: the store file differs.
      expect(readFileSync(join(other.home, "secrets", "store", "PROBE_API_KEY.json"), "utf8")).not.toBe(
        readFileSync(join(gw.home, "secrets", "store", "PROBE_API_KEY.json"), "utf8"),
      );
      // A second merge finds everything in place and changes nothing.
      const again = await runCli([
        "restore",
        archive,
        "--mode",
        "merge",
        "--passphrase-file",
        passFile,
        "--json",
        "--home",
        other.home,
      ]);
      expect(again.code, again.stderr).toBe(0);
      const second = (JSON.parse(again.stdout) as { items: Json[] }).items;
      expect(second.filter((i) => i.outcome !== "unchanged")).toEqual([]);
    } finally {
      await other.stop();
      await rm(other.home, { recursive: true, force: true });
    }
  }, 180_000);

  it("replaces a fresh home on another port: the apps answer with their data, the secret arrives, the log verifies", async () => {
    // Another machine: no registry to fetch from, and the granted folder not there (yet).
    await registry?.close();
    registry = null;
    renameSync(documents, `${documents}.elsewhere`);
    const target = join(mkdtempSync(join(root, "restore-")), "home");
    const result = await replaceInto(target, "--json");
    expect(result.code, result.stderr).toBe(0);
    const { plan } = JSON.parse(result.stdout) as Json;
    expect(plan.counts.log_rows).toBeGreaterThan(2000);
    expect(plan.apps.find((a: Json) => a.name === FS_APP).packages_from).toBe("archive");
    // The grant is kept as consented, and reported: its folder is not on this machine.
    expect(plan.folder_grants).toEqual([
      { app: FS_APP, need: "documents", path: documents, access: "read-write", exists: false },
    ]);
    expect(JSON.parse(readFileSync(join(target, "restore-packages.json"), "utf8")).apps).toEqual([{ name: FS_APP }]);
    expect(existsSync(join(target, "apps", FS_APP, "node_modules", "@modelcontextprotocol"))).toBe(false);
    // The agent's server map names this home, not the archived one.
    const entry = JSON.parse(readFileSync(join(target, "mcp.json"), "utf8")).mcpServers[FS_KEY];
    expect(entry.args).toEqual(["mcp", "run", FS_APP, FS_APP, "--home", target]);
    const db = join(target, "apps", APP, "data", "app.db");
    expect(integrityOf(db)).toBe("ok");
    expect(countOf(db, "big")).toBe(BIG_ROWS);
    expect(existsSync(`${db}-wal`)).toBe(false);
    const rows = dbRows(target);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.length).toBeLessThanOrEqual(rowsAtBackup);
    expectNoRowLost(rows, "1.0.0");
    // The log ends at the archive's head; the checkpoint it carries is proved offline on the restored home.
    const opened = await OpenedArchive.open(archive);
    const { checkpoint, head } = opened.manifest.log;
    await opened.close();
    writeFileSync(join(root, "cp.note"), checkpoint.note);
    writeFileSync(join(root, "cp.note.pub"), checkpoint.public_key);
    const offline = await runCli(["security", "verify", "--checkpoint", join(root, "cp.note"), "--home", target]);
    expect(offline.code, offline.stdout + offline.stderr).toBe(0);

    restored = await startGateway({ home: target, env: { HOME: ownerHome } });
    expect(restored.port).not.toBe(gw.port);
    await waitHealthy(restored);
    const state = await proxied(restored);
    expect(state.body?.secret).toBe(true);
    expect(state.body?.rows).toBeGreaterThanOrEqual(rows.length);
    const notes = (await (await restored.fetch("/apps/node-notes/api/notes")).json()) as { notes: Json[] };
    expect(notes.notes.map((n) => n.text)).toEqual([NOTE_TEXT]);
    // The pending approval came along, still pending.
    const approval = await restored.fetch(`/api/approvals/${approvalId}`);
    expect(approval.status).toBe(200);
    expect(JSON.stringify(await approval.json())).toContain('"pending"');
    // Sessions came along: the owner's token from the source home authorizes on the restored gateway.
    const apps = await fetch(`${restored.base}/api/apps`, { headers: { authorization: `Bearer ${ownerToken}` } });
    expect(apps.status, await apps.clone().text()).toBe(200);
    const verify = await runCli(["security", "verify", "--json", "--home", target]);
    expect(verify.code, verify.stdout).toBe(0);
    const events = (await (await restored.fetch("/api/security/events?limit=500")).json()) as { events: Json[] };
    expect(Math.max(...events.events.map((e) => e.seq))).toBeGreaterThan(head.seq);
    expect(events.events.some((e) => e.kind === "backup_started")).toBe(true);

    // The MCP server's closure is installed again, confined, from the tarballs the archive carried.
    await expect.poll(() => existsSync(join(target, "restore-packages.json")), { timeout: 120_000 }).toBe(false);
    const installed = (await (
      await restored.fetch("/api/security/events?kind=app_packages_restored&limit=10")
    ).json()) as { events: Json[] };
    expect(installed.events.map((e) => e.subject)).toEqual([FS_APP]);
    // Its folder is missing: the start is refused, never run with another folder or none.
    await expect(agentFromMcpJson(target, FS_KEY, ownerHome)).rejects.toThrow(/folder_grant_changed/);
    renameSync(`${documents}.elsewhere`, documents);
    const agent = await agentFromMcpJson(target, FS_KEY, ownerHome);
    try {
      expect(await toolText(agent, "read_file", { path: "/folders/documents/notes.txt" })).toBe("buy stamps\n");
    } finally {
      await agent.close();
    }
  }, 300_000);

  it("an app whose packages cannot be had is reported with its code, stays stopped and has nothing half installed", async () => {
    await restored?.stop();
    restored = null;
    const target = join(mkdtempSync(join(root, "restore-")), "home");
    const result = await replaceInto(target);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(
      `app ${FS_APP}: packages installed again at its first start, from the pinned files`,
    );
    // An archive that carried only the lock, and no registry to reach.
    const appDir = join(target, "apps", FS_APP);
    rmSync(join(appDir, "node_modules", ".personalclaw-npm-cache"), { recursive: true, force: true });
    restored = await startGateway({ home: target, env: { HOME: ownerHome } });
    await expect
      .poll(
        async () =>
          (
            (await (
              await restored!.fetch("/api/security/events?kind=app_packages_restore_failed&limit=10")
            ).json()) as { events: Json[] }
          ).events,
        { timeout: 120_000 },
      )
      .toEqual([expect.objectContaining({ subject: FS_APP, detail: { code: "install_step_failed" } })]);
    const pending = JSON.parse(readFileSync(join(target, "restore-packages.json"), "utf8")) as Json;
    expect(pending.apps).toEqual([
      { name: FS_APP, failed: { code: "install_step_failed", reason: expect.stringContaining("npm_closure") } },
    ]);
    expect(readdirSync(join(appDir, "node_modules")).filter((e) => e !== ".personalclaw-npm-cache")).toEqual([]);
    await expect(agentFromMcpJson(target, FS_KEY, ownerHome)).rejects.toThrow(/packages_not_restored/);
    // Uninstalled, it owes nothing: a new install of the name is not held back.
    const removed = await runCli(["apps", "uninstall", FS_APP, "--json", "--home", target]);
    expect(removed.code, removed.stdout + removed.stderr).toBe(0);
    expect(existsSync(join(target, "restore-packages.json"))).toBe(false);
  }, 300_000);
});
