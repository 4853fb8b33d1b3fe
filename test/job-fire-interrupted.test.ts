// A scheduled job's fire in flight when workerd dies is in the job's history as interrupted; it
// used to leave no trace, since a fire was kept only once its answer came. The real gateway,
// real bubblewrap, a job whose route answers after a minute, fired by the test build's
// injectable clock (the same fire the alarm runs); workerd alone is killed (kill -9) meanwhile
// and the bridge restarts it.
import { readFileSync, rmSync, mkdtempSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot, startGateway, type RunningGateway } from "./helpers/gateway";
import { install, waitForRow } from "./helpers/backends";

const APP = "slow-job";
const fixture = join(repoRoot, "test", "fixtures", "backend-apps", APP);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Run {
  scheduledFor: string;
  outcome: string;
  status: number | null;
  error: string | null;
}

function workerdPid(home: string): number {
  return (JSON.parse(readFileSync(join(home, "gateway.json"), "utf8")) as { workerdPid: number }).workerdPid;
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read().catch(() => undefined as T);
  while (!(value !== undefined && done(value)) && Date.now() < deadline) {
    await sleep(100);
    value = await read().catch(() => undefined as T);
  }
  return value;
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
          "x-session-key": "cli:test-clock",
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
    const started = await until(
      async () => ((await (await gw.fetch(`/apps/${APP}/api/started`)).json()) as { started: number }).started,
      (n) => n >= 1,
      20_000,
    );
    expect(started).toBe(1);
    // In flight: the owner sees it running.
    expect((await history()).history).toMatchObject([{ outcome: "running", scheduledFor: job.nextFire }]);

    const killed = workerdPid(gw.home);
    process.kill(killed, "SIGKILL");
    await firing;
    const after = await until(
      () => history(),
      (j) => j.history[0]?.outcome !== "running",
      30_000,
    );
    expect(workerdPid(gw.home)).not.toBe(killed);
    expect(after.history).toHaveLength(1);
    expect(after.history[0]).toMatchObject({ outcome: "interrupted", status: null, scheduledFor: job.nextFire });
    expect(after.history[0]!.error).toMatch(/stopped .* before the backend answered/);
  });
});
