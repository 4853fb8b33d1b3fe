// An uninstall that a crash cut short is finished at the next start, and so is the removal of
// the app's sealed copies of the owner's secrets: a recovered uninstall used to leave the copy,
// listed as "used by" the removed app for good. The real gateway killed whole (kill -9 of its
// process group) right after the app's files left, held there by the test build's pause.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeHome, removeHome, startGateway, type RunningGateway } from "./helpers/gateway";
import { install } from "./helpers/backends";
import { APP, appRow, post, sleep, waitForPause, waitHealthy, writeProbe, type Json } from "./helpers/probe-app";

const SECRET = "PROBE_API_KEY";

async function secretsListing(gw: RunningGateway): Promise<Json> {
  const answer = await gw.fetch("/api/secrets");
  expect(answer.status).toBe(200);
  return (await answer.json()) as Json;
}

async function killGroup(gw: RunningGateway): Promise<void> {
  try {
    process.kill(-gw.pid, "SIGKILL");
  } catch {
    // already gone
  }
  await gw.stop("SIGKILL");
  await sleep(200);
}

describe("an uninstall killed after its files left", () => {
  let root: string;
  let home: string;
  let gw: RunningGateway;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "pc-uninstall-secrets-"));
    home = makeHome("pc-uninstall-secrets-home-");
    gw = await startGateway({ home, detached: true });
    await install(home, await writeProbe(root, "1.0.0", { secrets: [{ name: SECRET, why: "the probe reports it" }] }));
    await waitHealthy(gw, "1.0.0");
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    removeHome(home);
    await rm(root, { recursive: true, force: true });
  });

  it("comes back finished with no copy of the owner's secret left for the removed app", async () => {
    const put = await gw.fetch(`/api/secrets/${SECRET}`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ value: "probe-secret-value-0123456789" }),
    });
    expect(put.status).toBe(200);
    expect((await post(gw, `/api/secrets/${SECRET}/assign`, { app: APP })).status).toBe(200);
    expect((await secretsListing(gw)).secrets).toEqual([
      { name: SECRET, stored: true, used_by: [{ app: APP, as: SECRET }] },
    ]);

    writeFileSync(join(home, "test-pause-at"), "uninstall:remove_files:done");
    const pending = gw
      .fetch(`/api/apps/${APP}`, { method: "DELETE", body: "{}", headers: { "content-type": "application/json" } })
      .catch(() => null);
    await waitForPause(home, "uninstall:remove_files:done");
    await killGroup(gw);
    await pending;
    rmSync(join(home, "test-pause-at"), { force: true });
    // Killed with the app's files gone and its sealed copy still there.
    expect(existsSync(join(home, "apps", APP))).toBe(false);
    expect(existsSync(join(home, "secrets", "apps", APP))).toBe(true);

    gw = await startGateway({ home, detached: true });
    expect(await appRow(gw)).toBeNull();
    const listing = await secretsListing(gw);
    // The owner's own stored copy stays; no app uses it any more.
    expect(listing.secrets).toEqual([{ name: SECRET, stored: true, used_by: [] }]);
    expect(existsSync(join(home, "secrets", "apps", APP))).toBe(false);
    expect(existsSync(join(home, "journal", `${APP}.json`))).toBe(false);
  });
});
