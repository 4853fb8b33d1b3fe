// The worker keeps what a request that changes nothing needs (the owner's verified session, the
// app's proxy target, token and grants, the app counts) so that such a request makes no Durable
// Object call. Each case here first makes the kept answer current with requests of its own,
// then changes the state behind it and proves the very next request sees the change.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { errorCode, removeHome, repoRoot, runCli, startGateway, type RunningGateway } from "./helpers/gateway";
import { install, waitForRow } from "./helpers/backends";

const nodeNotes = join(repoRoot, "apps", "fixtures", "node-notes");
const ECHO = "/apps/node-notes/api/echo";

/**
 * node-notes as `kept-sick`, whose health check fails for 32 s after POST /api/sick: long enough
 * for the watch's three misses 10 s apart to mark it unhealthy while its process still answers.
 */
function sickableApp(root: string): string {
  const dir = join(root, "kept-sick");
  cpSync(nodeNotes, dir, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(dir, "app.json"), "utf8"));
  writeFileSync(join(dir, "app.json"), JSON.stringify({ ...manifest, name: "kept-sick", displayName: "kept-sick" }));
  const server = readFileSync(join(dir, "server.mjs"), "utf8").replace(
    '"GET /health": (req, res) => send(res, 200, { ok: true }),',
    `"GET /health": (req, res) => (Date.now() < sickUntil ? send(res, 500, { ok: false }) : send(res, 200, { ok: true })),
  "POST /api/sick": (req, res) => { sickUntil = Date.now() + 32_000; send(res, 200, {}); },`,
  );
  writeFileSync(join(dir, "server.mjs"), `let sickUntil = 0;\n${server}`);
  return dir;
}

describe("what the worker keeps never outlives the change behind it", () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway();
    await install(gw.home, nodeNotes);
    expect(await waitForRow(gw, "node-notes", (r) => r.healthy)).toMatchObject({ healthy: true });
  }, 120_000);
  afterAll(async () => {
    await gw.stop();
    removeHome(gw.home);
  });

  /** Two answers in a row, so what the worker keeps for this request is filled and then used. */
  async function reachedTwice(init: RequestInit = {}): Promise<void> {
    for (let i = 0; i < 2; i++) expect((await gw.fetch(ECHO, init)).status).toBe(200);
  }

  const appCounts = async () => ((await (await gw.fetch("/api/status")).json()) as { apps: unknown }).apps;

  it("a disabled app's proxy answers 409 app_disabled on the very next request; enabled, its new secret signs the next one", async () => {
    await reachedTwice();
    const secretFile = join(gw.home, "apps", "node-notes", ".app_secret");
    const oldSecret = readFileSync(secretFile, "utf8");
    expect(await appCounts()).toEqual({ installed: 2, running: 1 });
    expect((await runCli(["apps", "disable", "node-notes", "--home", gw.home])).code).toBe(0);
    const refused = await gw.fetch(ECHO);
    expect(refused.status).toBe(409);
    expect(await errorCode(refused)).toBe("app_disabled");
    expect(await appCounts()).toEqual({ installed: 2, running: 0 });
    expect((await runCli(["apps", "enable", "node-notes", "--home", gw.home])).code).toBe(0);
    expect(await waitForRow(gw, "node-notes", (r) => r.healthy)).toMatchObject({ healthy: true });
    // The backend verifies every request against the new start's secret and refuses any other.
    expect(readFileSync(secretFile, "utf8")).not.toBe(oldSecret);
    expect((await gw.fetch(ECHO)).status).toBe(200);
  }, 60_000);

  it("an owner token signed out is refused on the very next proxied request", async () => {
    const minted = await runCli(["token", "--home", gw.home]);
    expect(minted.code).toBe(0);
    const token = new URL(minted.stdout.trim().split("\n")[0]).searchParams.get("token")!;
    const bearer = { headers: { authorization: `Bearer ${token}` } };
    await reachedTwice(bearer);
    const out = await gw.fetch("/api/auth/logout", {
      method: "POST",
      headers: { ...bearer.headers, "content-type": "application/json" },
      body: "{}",
    });
    expect(out.status).toBe(200);
    const refused = await gw.fetch(ECHO, bearer);
    expect(refused.status).toBe(403);
    expect(await errorCode(refused)).toBe("auth_bearer_invalid");
    await reachedTwice();
  });

  it("an uninstalled app is 404 app_not_found on the very next request, and the counts drop at once", async () => {
    await reachedTwice();
    expect(await appCounts()).toEqual({ installed: 2, running: 1 });
    expect((await runCli(["apps", "uninstall", "node-notes", "--home", gw.home])).code).toBe(0);
    const gone = await gw.fetch(ECHO);
    expect(gone.status).toBe(404);
    expect(await errorCode(gone)).toBe("app_not_found");
    expect(await appCounts()).toEqual({ installed: 1, running: 0 });
  }, 60_000);

  it("a backend its health watch marks unhealthy answers 503 on the very next request though its process still runs, and 200 once it is healthy again", async () => {
    const root = mkdtempSync("/var/tmp/pc-kept-");
    try {
      await install(gw.home, sickableApp(root));
      expect(await waitForRow(gw, "kept-sick", (r) => r.healthy)).toMatchObject({ healthy: true });
      const echo = "/apps/kept-sick/api/echo";
      for (let i = 0; i < 2; i++) expect((await gw.fetch(echo)).status).toBe(200);
      expect((await gw.fetch("/apps/kept-sick/api/sick", { method: "POST", body: "{}" })).status).toBe(200);
      const sick = await waitForRow(gw, "kept-sick", (r) => !r.healthy, 40_000);
      expect(sick).toMatchObject({ running: true, healthy: false });
      const refused = await gw.fetch(echo);
      expect(refused.status).toBe(503);
      expect(await errorCode(refused)).toBe("app_backend_unavailable");
      expect(await waitForRow(gw, "kept-sick", (r) => r.healthy, 25_000)).toMatchObject({ healthy: true });
      expect((await gw.fetch(echo)).status).toBe(200);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, 90_000);

  it("the sign-ins list shows a new sign-in, its name and its sign-out on the very next request", async () => {
    type Row = { id: string; kind: string; name: string | null; user_agent: string | null };
    const rows = async (): Promise<Row[]> => {
      const answer = await gw.fetch("/api/auth/sessions");
      expect(answer.status).toBe(200);
      return ((await answer.json()) as { sessions: Row[] }).sessions;
    };
    const before = await rows();
    expect(await rows()).toEqual(before);

    const secret = readFileSync(join(gw.home, ".local_secret"), "utf8").trim();
    const minted = await gw.fetch("/api/token/local?ttl=7d", {
      owner: false,
      headers: { "x-internal-secret": secret, "x-personalclaw-work": "test", "x-local-secret": secret },
    });
    expect(minted.status).toBe(200);
    const token = ((await minted.json()) as { token: string }).token;
    const afterMint = await rows();
    expect(afterMint.length).toBe(before.length + 1);
    const opened = await gw.fetch(`/?token=${token}`, {
      owner: false,
      redirect: "manual",
      headers: { "user-agent": "kept-reads-browser/1.0" },
    });
    expect(opened.status).toBe(302);
    const browser = (await rows()).find((r) => r.kind === "browser" && r.user_agent === "kept-reads-browser/1.0");
    expect(browser).toBeDefined();

    const named = await gw.fetch(`/api/auth/sessions/${browser!.id}/name`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "kept reads" }),
    });
    expect(named.status).toBe(200);
    expect((await rows()).find((r) => r.id === browser!.id)?.name).toBe("kept reads");

    const signedOut = await gw.fetch(`/api/auth/sessions/${browser!.id}/signout`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(signedOut.status).toBe(200);
    expect((await rows()).some((r) => r.id === browser!.id)).toBe(false);
  });

  it("after `personalclaw auth rotate-key` the owner's token is refused on the very next request", async () => {
    expect((await gw.fetch("/api/status")).status).toBe(200);
    expect((await gw.fetch("/api/status")).status).toBe(200);
    expect((await runCli(["auth", "rotate-key", "--home", gw.home])).code).toBe(0);
    const refused = await gw.fetch("/api/status");
    expect(refused.status).toBe(403);
    expect(await errorCode(refused)).toBe("auth_bearer_invalid");
  });
});
