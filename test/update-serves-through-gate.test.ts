// An update of an app that declares no storage keeps its old version answering until the new
// one is healthy: the new backend starts beside it on its own socket, the gateway switches to it
// in one report, and only then the old one stops; a new version that never becomes healthy is
// stopped and the old one never noticed. An app with storage is told it is down for the gate.
// The real gateway, its bridge, workerd and bubblewrap; a client asks the app all the while.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { removeHome, runCli, startGateway, type RunningGateway } from "./helpers/gateway";
import { install, waitForRow } from "./helpers/backends";
import { post, sleep, type Json } from "./helpers/probe-app";
import { BESIDE, besideAnswer, countAnswers, writeBeside } from "./helpers/beside-app";

/** How long the new versions of these tests answer 503 to their health check after they start. */
const SLOW_MS = 4_000;

async function row(gw: RunningGateway, name = BESIDE): Promise<Json> {
  const response = await gw.fetch(`/api/apps/${name}`);
  expect(response.status).toBe(200);
  return (await response.json()) as Json;
}

function runRecords(home: string): string[] {
  const dir = join(home, "run", "backends");
  return existsSync(dir) ? readdirSync(dir).filter((f) => f.startsWith(`${BESIDE}.`)) : [];
}

describe("an update of an app without storage: the old version answers through the health gate", () => {
  let gw: RunningGateway;
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "pc-beside-"));
    gw = await startGateway();
    await install(gw.home, await writeBeside(root, "1.0.0"));
    await waitForRow(gw, BESIDE, (b) => b.running && b.healthy, 30_000);
  }, 90_000);
  afterAll(async () => {
    await gw?.stop();
    if (gw) removeHome(gw.home);
    await rm(root, { recursive: true, force: true });
  });

  it("the app's row says an update keeps it answering (an app with storage: the last test)", async () => {
    expect((await row(gw)).updateKeepsServing).toBe(true);
  });

  it("a slow-to-healthy update: every answer meanwhile is the old version's, then the new one's, never a 503", async () => {
    const before = await row(gw);
    const folder = await writeBeside(root, "2.0.0", { healthyAfterMs: SLOW_MS });
    const asking = countAnswers(gw);
    const started = Date.now();
    const cli = await runCli(["apps", "update", BESIDE, folder, "--home", gw.home]);
    const took = Date.now() - started;
    expect(cli.code, cli.stdout + cli.stderr).toBe(0);
    // The CLI's step lines say why the old version kept answering.
    expect(cli.stderr).toContain("stop old: skipped (the app declares no storage");
    expect(cli.stderr).toContain("switch: done");
    // And which of its files change, against the installed copy.
    expect(cli.stderr).toContain("  Files: changes app.json, server.mjs\n");
    // A few answers after the update's own answer, which come from the new version.
    await waitForRow(gw, BESIDE, (b) => b.running && b.healthy, 10_000);
    await sleep(300);
    const seen = await asking.stop();
    expect(took).toBeGreaterThanOrEqual(SLOW_MS);
    expect(seen.filter((a) => a.status !== 200)).toEqual([]);
    const versions = seen.map((a) => a.version);
    const firstNew = versions.indexOf("2.0.0");
    expect(firstNew).toBeGreaterThan(0);
    // Old, then new, and never the old again once the new one answered.
    expect(versions.slice(0, firstNew).every((v) => v === "1.0.0")).toBe(true);
    expect(versions.slice(firstNew).every((v) => v === "2.0.0")).toBe(true);
    // The old version answered during the new one's slow health gate, which cannot have ended
    // before SLOW_MS after the update began (answers are timed, not counted: load slows them).
    expect(seen[firstNew - 1]!.at - started).toBeGreaterThanOrEqual(SLOW_MS / 2);
    const after = await row(gw);
    expect(after.version).toBe("2.0.0");
    expect(after.backend.pid).not.toBe(before.backend.pid);
    // The old backend is gone: one run record, the new one's; no rollback copy or journal.
    await expect.poll(() => existsSync(`/proc/${before.backend.pid}`), { timeout: 10_000 }).toBe(false);
    expect(runRecords(gw.home)).toHaveLength(1);
    expect(existsSync(join(gw.home, "apps", `.${BESIDE}.rollback`))).toBe(false);
    expect(existsSync(join(gw.home, "journal", `${BESIDE}.json`))).toBe(false);
  }, 120_000);

  it("a failed update: the old version answers throughout, and the answer says what the new one answered", async () => {
    const before = await row(gw);
    // The new version gives its backend 10 s to start (its own gate; 30 s unless set).
    const folder = await writeBeside(root, "3.0.0", {
      sick: "config schema 4 is not supported",
      startTimeoutSeconds: 10,
    });
    const asking = countAnswers(gw);
    const answer = await post(gw, `/api/apps/${BESIDE}/update`, { source: folder });
    await sleep(300);
    const seen = await asking.stop();
    expect(answer.status, JSON.stringify(answer.body)).toBe(422);
    expect(answer.body.error.code).toBe("update_unhealthy");
    expect(answer.body.error.message).toContain(
      "with 2xx within 10 s; last it answered 500: config schema 4 is not supported",
    );
    expect(answer.body.error.message).not.toContain("at migrate");
    expect(answer.body.error.message).toContain("The previous version answered throughout and still does.");
    expect(answer.body.error.detail).toMatchObject({ step: "health", kept_answering: true });
    // The whole 10 s gate of answers, every one 200 from the old version.
    expect(seen.at(-1)!.at - seen[0]!.at).toBeGreaterThanOrEqual(9_500);
    expect(seen.filter((a) => a.status !== 200 || a.version !== "2.0.0")).toEqual([]);
    expect(seen.length).toBeGreaterThan(10);
    const after = await row(gw);
    expect(after.version).toBe("2.0.0");
    expect(after.backend).toMatchObject({ running: true, healthy: true, pid: before.backend.pid });
    // The new version's backend was stopped: only the running one's run record is left.
    expect(runRecords(gw.home)).toHaveLength(1);
    expect(readdirSync(join(gw.home, "apps", ".quarantine"))).toEqual([]);
    expect(existsSync(join(gw.home, "apps", `.${BESIDE}.rollback`))).toBe(false);
    expect((await besideAnswer(gw)).version).toBe("2.0.0");
  }, 120_000);

  it("a disabled app answers nothing, so its row says no update keeps it answering; enabled again, it does", async () => {
    expect((await post(gw, `/api/apps/${BESIDE}/disable`, {})).status).toBe(200);
    expect(await row(gw)).toMatchObject({ enabled: false, updateKeepsServing: false });
    expect((await post(gw, `/api/apps/${BESIDE}/enable`, {})).status).toBe(200);
    await waitForRow(gw, BESIDE, (b) => b.running && b.healthy, 30_000);
    expect(await row(gw)).toMatchObject({ enabled: true, updateKeepsServing: true });
  }, 60_000);

  it("an app that declares storage is stopped for the gate, and the update's steps say so", async () => {
    const folder = await writeBeside(root, "4.0.0", { storage: true });
    const consented = await post(gw, "/api/apps/preview", { source: folder, name: BESIDE });
    expect(consented.status).toBe(200);
    const updated = await post(gw, `/api/apps/${BESIDE}/update`, { source: folder, consent: consented.body.digest });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect((await row(gw)).updateKeepsServing).toBe(false);
    const cli = await runCli([
      "apps",
      "update",
      BESIDE,
      await writeBeside(root, "4.1.0", { storage: true }),
      "--home",
      gw.home,
    ]);
    expect(cli.code, cli.stdout + cli.stderr).toBe(0);
    expect(cli.stderr).toContain(
      "stop old: done (the app declares storage: its backend is stopped before data/ is copied",
    );
    expect(cli.stderr).not.toContain("switch:");
  }, 120_000);
});
