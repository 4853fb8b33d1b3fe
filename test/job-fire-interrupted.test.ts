// A scheduled job's fire in flight when workerd dies is in the job's history as interrupted; it
// used to leave no trace, since a fire was kept only once its answer came. The real gateway,
// real bubblewrap, a job whose route answers after a minute, fired by the test build's
// injectable clock (the same fire the alarm runs); workerd alone is killed (kill -9) meanwhile
// and the bridge restarts it.
import { readFileSync, rmSync, mkdtempSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, repoRoot, startGateway, workerdPidOf, type RunningGateway } from "./helpers/gateway";
import { install, waitForRow } from "./helpers/backends";

const APP = "slow-job";
const fixture = join(repoRoot, "test", "fixtures", "backend-apps", APP);

interface Run {
  scheduledFor: string;
  outcome: string;
  status: number | null;
  error: string | null;
}

describe("a job fire in flight when workerd dies", () => {
  let root: string;
  let gw: RunningGateway;

  async function history(): Promise<{ nextFire: string; history: Run[] }> {
    const answer = await gw.fetch(`/api/apps/${APP}/jobs`);
    expect(answer.status).toBe(200);
    return ((await answer.json()) as { jobs: Array<{ nextFire: string; history: Run[] }> }).jobs[0]!;
  }

  /** Runs the jobs due at `now` (test build: X-Test-Now through the internal credential), as the alarm would. */
  function fireAt(now: number): Promise<unknown> {
    return gw
      .fetch(`/api/apps/${APP}/jobs`, {
        owner: false,
        headers: {
          "x-test-now": String(now),
          "x-internal-secret": readFileSync(join(gw.home, ".local_secret"), "utf8").trim(),
          "x-personalclaw-work": "cli:test-clock",
        },
      })
      .catch(() => null);
  }

  beforeAll(async () => {
    // Under /var/tmp: the sandbox gives a backend its own /tmp.
    root = mkdtempSync("/var/tmp/pc-job-interrupted-");
    gw = await startGateway({ home: join(root, "home") });
    await install(gw.home, fixture);
    expect((await waitForRow(gw, APP, (row) => row.healthy))?.healthy).toBe(true);
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it("is kept as interrupted once workerd is back, and shows as running while it is in flight", async () => {
    const job = await history();
    expect(job.history).toEqual([]);
    const due = Date.parse(job.nextFire);
    const firing = fireAt(due + 1_000);
    const started = await eventually(
      async () => ((await (await gw.fetch(`/apps/${APP}/api/started`)).json()) as { started: number }).started,
      (n) => n >= 1,
      20_000,
    );
    expect(started).toBe(1);
    // In flight: the owner sees it running.
    expect((await history()).history).toMatchObject([{ outcome: "running", scheduledFor: job.nextFire }]);

    const killed = workerdPidOf(gw.home);
    process.kill(killed, "SIGKILL");
    await firing;
    const after = await eventually(
      () => history(),
      (j) => j.history[0]?.outcome !== "running",
      30_000,
    );
    expect(workerdPidOf(gw.home)).not.toBe(killed);
    expect(after.history).toHaveLength(1);
    expect(after.history[0]).toMatchObject({ outcome: "interrupted", status: null, scheduledFor: job.nextFire });
    expect(after.history[0]!.error).toMatch(/stopped .* before the backend answered/);
  });
});
