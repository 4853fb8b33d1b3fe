// The app lifecycle against a really started gateway with real bubblewrap: update without and
// with consent, a health-gated update that rolls back, a probe app writing rows into
// data/app.db throughout, idempotent and serial transitions, restart on request and by the
// watchdog. The whole gateway killed at each step of install, update and uninstall is
// test/lifecycle-killed-at-every-step.test.ts (the faults tier).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, readdirSync, readFileSync, renameSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { removeHome, runCli, startGateway, type RunningGateway } from "./helpers/gateway";
import { install, waitForRow } from "./helpers/backends";
import {
  APP,
  appRow,
  dbRows,
  expectNoRowLost,
  post,
  proxied,
  securityRows,
  sleep,
  waitHealthy,
  writeProbe,
  type Json,
} from "./helpers/probe-app";

describe("update, transitions and restart", () => {
  let gw: RunningGateway;
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "pc-lifecycle-"));
    gw = await startGateway();
    await install(gw.home, await writeProbe(root, "1.0.0"));
    await waitHealthy(gw, "1.0.0");
  }, 60_000);
  afterAll(async () => {
    await gw?.stop();
    if (gw) removeHome(gw.home);
    await rm(root, { recursive: true, force: true });
  });

  it("an update that changes none of the disclosure installs without consent, and the probe's rows all survive it", async () => {
    await sleep(300);
    const before = dbRows(gw.home).filter((r) => r.version === "1.0.0").length;
    expect(before).toBeGreaterThan(10);
    const folder = await writeProbe(root, "1.1.0");
    const preview = await post(gw, "/api/apps/preview", { source: folder, name: APP });
    expect(preview.status).toBe(200);
    expect(preview.body.consentNeeded).toBe(false);
    expect(preview.body.changes).toEqual([]);
    const result = await runCli(["apps", "update", APP, folder, "--json", "--home", gw.home]);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const answer = JSON.parse(result.stdout) as Json;
    expect(answer.app.version).toBe("1.1.0");
    await waitHealthy(gw, "1.1.0");
    await sleep(200);
    const rows = dbRows(gw.home);
    // Every row the old version committed is in the new copy, up to its own stop row.
    const old = expectNoRowLost(rows, "1.0.0");
    expect(old).toBeGreaterThanOrEqual(before);
    expect(rows.some((r) => r.version === "1.0.0" && r.kind === "stopped")).toBe(true);
    expectNoRowLost(rows, "1.1.0");
    expect(existsSync(join(gw.home, "apps", `.${APP}.rollback`))).toBe(false);
    expect(existsSync(join(gw.home, "journal", `${APP}.json`))).toBe(false);
    expect((await proxied(gw)).body?.version).toBe("1.1.0");
    const updated = await securityRows(gw, ["app_updated"]);
    expect(updated.at(-1)?.detail).toMatchObject({ from: "1.0.0", to: "1.1.0", changes: [] });
  }, 90_000);

  it("an update that adds a permission answers 409 with what changes, then installs after the owner's consent", async () => {
    const folder = await writeProbe(root, "1.2.0", { permissions: { memory: true } });
    const refused = await post(gw, `/api/apps/${APP}/update`, { source: folder });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("consent_required");
    expect(refused.body.error.detail.changes).toEqual([{ field: "permissions.memory", before: false, after: true }]);
    expect((await appRow(gw))?.version).toBe("1.1.0");
    expect((await proxied(gw)).status).toBe(200);
    const preview = await post(gw, "/api/apps/preview", { source: folder, name: APP });
    expect(preview.body.consentNeeded).toBe(true);
    expect(preview.body.digest).toBe(refused.body.error.detail.digest);
    const cli = await runCli(["apps", "update", APP, folder, "--json", "--home", gw.home]);
    expect(cli.code).toBe(1);
    expect(JSON.parse(cli.stdout).error.code).toBe("consent_required");
    const consented = await post(gw, `/api/apps/${APP}/update`, { source: folder, consent: preview.body.digest });
    expect(consented.status, JSON.stringify(consented.body)).toBe(200);
    expect(consented.body.app.version).toBe("1.2.0");
    await waitHealthy(gw, "1.2.0");
  }, 90_000);

  it("an update that asks for a secret it did not ask for before needs the owner's consent, as a new permission does", async () => {
    const secrets = [{ name: "PROBE_API_KEY", why: "asked for only in this update" }];
    const folder = await writeProbe(root, "1.3.0", { permissions: { memory: true }, secrets });
    const refused = await post(gw, `/api/apps/${APP}/update`, { source: folder });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("consent_required");
    // A secret declared without a use is one the app holds: the change says so.
    const held = { ...secrets[0], appHoldsValue: true, sendsTo: [], note: expect.stringContaining("The app holds") };
    expect(refused.body.error.detail.changes).toEqual([{ field: "secrets", before: [], after: [held] }]);
    const cli = await runCli(["apps", "update", APP, folder, "--json", "--home", gw.home]);
    expect(cli.code).toBe(1);
    expect(JSON.parse(cli.stdout).error.code).toBe("consent_required");
    expect((await appRow(gw))?.version).toBe("1.2.0");
  }, 90_000);

  it("an update whose backend never becomes healthy is rolled back: the old version serves again with its data as it left it", async () => {
    await writeFile(join(gw.home, "apps", APP, "data", "notes.txt"), "kept exactly\n");
    // The same disclosure as the installed 1.2.0, so no consent is asked: only its backend fails.
    const folder = await writeProbe(root, "2.0.0", { broken: true, permissions: { memory: true } });
    const answer = await post(gw, `/api/apps/${APP}/update`, { source: folder });
    expect(answer.status, JSON.stringify(answer.body).slice(0, 2000)).toBe(422);
    expect(answer.body.error.code).toBe("update_unhealthy");
    expect(answer.body.error.message).toMatch(/exited with code 7/);
    expect(answer.body.error.message).toContain("The previous version runs again with its data.");
    expect((await appRow(gw))?.version).toBe("1.2.0");
    await waitHealthy(gw, "1.2.0");
    const served = await proxied(gw);
    expect(served.status).toBe(200);
    expect(served.body?.version).toBe("1.2.0");
    expect(readFileSync(join(gw.home, "apps", APP, "data", "notes.txt"), "utf8")).toBe("kept exactly\n");
    const rows = dbRows(gw.home);
    expect(rows.some((r) => r.version === "2.0.0")).toBe(false);
    expectNoRowLost(rows, "1.2.0");
    expect(JSON.parse(readFileSync(join(gw.home, "apps", APP, "app.json"), "utf8")).version).toBe("1.2.0");
    expect(existsSync(join(gw.home, "apps", `.${APP}.rollback`))).toBe(false);
    expect(readdirSync(join(gw.home, "apps", ".quarantine"))).toEqual([]);
    const refused = await securityRows(gw, ["app_update_refused"]);
    expect(refused.some((r) => r.detail.code === "update_unhealthy")).toBe(true);
  }, 90_000);

  it("an update whose backend answers its health check with an error says what it answered, through the text-safety rules", async () => {
    // A 500 with its reason in the body (and a colour escape a terminal would obey), for the whole
    // gate: the 4 s the new manifest gives its backend to start (30 s unless it says).
    const sick = "migration 7 failed: column \u001b[31mnotes\u001b[0m already exists";
    const folder = await writeProbe(root, "2.1.0", { sick, permissions: { memory: true }, startTimeoutSeconds: 4 });
    const answer = await post(gw, `/api/apps/${APP}/update`, { source: folder });
    expect(answer.status, JSON.stringify(answer.body).slice(0, 2000)).toBe(422);
    expect(answer.body.error.code).toBe("update_unhealthy");
    const message: string = answer.body.error.message;
    expect(message).toContain("did not answer its health check (GET /health) with 2xx within 4 s");
    expect(message).toContain("last it answered 500: migration 7 failed: column");
    expect(message).toContain("notes");
    expect(message).not.toContain("\u001b");
    expect(message).not.toContain("server.py");
    expect((await appRow(gw))?.version).toBe("1.2.0");
    await waitHealthy(gw, "1.2.0");
  }, 120_000);

  it("a native app refuses an update with 400", async () => {
    const answer = await post(gw, "/api/apps/welcome/update", { source: join(root, "probe-1.0.0") });
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe("app_update_locked");
  });

  it("enable on an enabled app is a no-op: the proxy keeps answering 200", async () => {
    await waitHealthy(gw);
    const pid = (await appRow(gw))!.backend.pid;
    for (let i = 0; i < 2; i += 1) {
      const answer = await post(gw, `/api/apps/${APP}/enable`, {});
      expect(answer.status).toBe(200);
      expect(answer.body.changed).toBe(false);
    }
    await sleep(300);
    expect((await proxied(gw)).status).toBe(200);
    expect((await appRow(gw))!.backend.pid).toBe(pid);
    const disabled = await post(gw, `/api/apps/${APP}/disable`, {});
    expect(disabled.body.changed).toBe(true);
    const again = await post(gw, `/api/apps/${APP}/disable`, {});
    expect(again.status).toBe(200);
    expect(again.body.changed).toBe(false);
    expect((await post(gw, `/api/apps/${APP}/enable`, {})).body.changed).toBe(true);
    await waitHealthy(gw);
    expect((await proxied(gw)).status).toBe(200);
  }, 60_000);

  it("a disable whose bridge call fails changes nothing in the registry and still writes its row", async () => {
    await waitHealthy(gw);
    const eventsOf = async () =>
      (
        (await (await gw.fetch("/api/security/events?kind=app_disable_refused")).json()) as {
          events: Array<{ subject: string }>;
        }
      ).events;
    const refusedBefore = (await eventsOf()).filter((e) => e.subject === APP).length;
    // The bridge runs in the CLI's process: stopped, it answers nothing (workerd keeps serving).
    process.kill(gw.pid, "SIGSTOP");
    let answer: { status: number; body: any };
    try {
      answer = await post(gw, `/api/apps/${APP}/disable`, {});
    } finally {
      process.kill(gw.pid, "SIGCONT");
    }
    expect(answer.status).toBe(502);
    expect(answer.body.error.code).toBe("bridge_unavailable");
    const row = await appRow(gw);
    expect(row!.enabled).toBe(true);
    await expect
      .poll(async () => (await eventsOf()).filter((e) => e.subject === APP).length, { timeout: 10_000 })
      .toBe(refusedBefore + 1);
    // The bridge's health probes stalled while it was stopped: the backend may be reported
    // unhealthy once before the next probe finds it well. It serves again, still enabled.
    await expect.poll(async () => (await proxied(gw)).status, { timeout: 30_000 }).toBe(200);
    expect((await appRow(gw))!.enabled).toBe(true);
  }, 90_000);

  it("20 concurrent enable and disable calls leave a consistent state and one security-log row each", async () => {
    const kinds = ["app_enabled", "app_disabled", "app_enable_refused", "app_disable_refused"];
    const before = (await securityRows(gw, kinds)).length;
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => post(gw, `/api/apps/${APP}/${i % 2 === 0 ? "disable" : "enable"}`, {})),
    );
    for (const answer of answers) {
      expect([200, 409]).toContain(answer.status);
      if (answer.status === 409) expect(answer.body.error.code).toBe("app_busy");
    }
    expect(answers.some((a) => a.status === 200)).toBe(true);
    expect((await securityRows(gw, kinds)).length - before).toBe(20);
    const row = await appRow(gw);
    const backend = await waitForRow(gw, APP, (b) => (row!.enabled ? b.running && b.healthy : !b.running), 30_000);
    expect(backend?.running).toBe(row!.enabled);
    // Whatever it is, one more enable leaves it serving.
    expect((await post(gw, `/api/apps/${APP}/enable`, {})).status).toBe(200);
    await waitHealthy(gw);
    expect((await proxied(gw)).status).toBe(200);
  }, 60_000);

  it("restart on request and a watchdog revival both count in restarts, and a missing folder is named as the cause", async () => {
    const first = await waitHealthy(gw);
    const restarted = await runCli(["apps", "restart", APP, "--json", "--home", gw.home]);
    expect(restarted.code, restarted.stderr).toBe(0);
    const afterRestart = await waitForRow(
      gw,
      APP,
      (b) => b.healthy && b.pid !== first.pid && b.restarts === first.restarts + 1,
    );
    expect(afterRestart?.restarts).toBe(first.restarts + 1);
    process.kill(afterRestart!.pid!, "SIGKILL");
    const revived = await waitForRow(
      gw,
      APP,
      (b) => b.healthy && b.pid !== afterRestart!.pid && b.restarts === first.restarts + 2,
      20_000,
    );
    expect(revived?.restarts).toBe(first.restarts + 2);
    // A folder that vanished: the row names it, in words.
    const appDir = join(gw.home, "apps", APP);
    const aside = join(gw.home, "probe-aside");
    renameSync(appDir, aside);
    try {
      process.kill(revived!.pid!, "SIGKILL");
      const down = await waitForRow(gw, APP, (b) => !b.running && /app folder missing/.test(b.reason ?? ""), 20_000);
      expect(down?.reason).toMatch(/app folder missing/);
      expect(down?.exit).not.toBeNull();
    } finally {
      renameSync(aside, appDir);
    }
    expect((await post(gw, `/api/apps/${APP}/restart`, {})).status).toBe(200);
    await waitHealthy(gw);
  }, 90_000);
});
