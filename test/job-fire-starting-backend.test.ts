// A scheduled job due while its app's backend is starting (spawned, its health check not
// answered yet: right after an install or an enable) waits for the backend instead of failing
// at once; it used to fail with no status when the fire came in the same second the install
// settled. The real gateway, real bubblewrap, a backend whose health check answers only once the
// test writes data/ready, and the job fired by the test build's injectable clock (the same fire
// the alarm runs).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot, startGateway, type RunningGateway } from "./helpers/gateway";
import { install, waitForRow } from "./helpers/backends";

const APP = "late-health-job";
const fixture = join(repoRoot, "test", "fixtures", "backend-apps", APP);

interface Run {
  outcome: string;
  status: number | null;
  error: string | null;
}

describe("a job due while its app's backend starts", () => {
  let root: string;
  let gw: RunningGateway;

  async function job(): Promise<{ nextFire: string; history: Run[] }> {
    const answer = await gw.fetch(`/api/apps/${APP}/jobs`);
    expect(answer.status).toBe(200);
    return ((await answer.json()) as { jobs: Array<{ nextFire: string; history: Run[] }> }).jobs[0]!;
  }

  /** Runs the jobs due at `now` (test build: X-Test-Now through the internal credential), as the alarm would. */
  function fireAt(now: number): Promise<Response> {
    return gw.fetch(`/api/apps/${APP}/jobs`, {
      owner: false,
      headers: {
        "x-test-now": String(now),
        "x-internal-secret": readFileSync(join(gw.home, ".local_secret"), "utf8").trim(),
        "x-personalclaw-work": "cli:test-clock",
      },
    });
  }

  beforeAll(async () => {
    // Under /var/tmp: the sandbox gives a backend its own /tmp.
    root = mkdtempSync("/var/tmp/pc-job-starting-");
    gw = await startGateway({ home: join(root, "home") });
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it("waits for the backend's health check, then fires once and succeeds", async () => {
    await install(gw.home, fixture);
    const starting = await waitForRow(gw, APP, (row) => row.running);
    expect(starting).toMatchObject({ running: true, healthy: false });
    const { nextFire, history } = await job();
    expect(history).toEqual([]);
    let answered = false;
    const firing = fireAt(Date.parse(nextFire) + 1_000).finally(() => (answered = true));
    // The fire waits: in the history as running, not failed, while the health check is not answered.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(answered).toBe(false);
    expect((await job()).history).toMatchObject([{ outcome: "running" }]);
    writeFileSync(join(gw.home, "apps", APP, "data", "ready"), "");
    expect((await firing).status).toBe(200);
    expect((await job()).history).toMatchObject([{ outcome: "ok", status: 200, error: null }]);
    const ticks = await gw.fetch(`/apps/${APP}/api/ticks`);
    expect(((await ticks.json()) as { ticks: number }).ticks).toBe(1);
  }, 120_000);
});
