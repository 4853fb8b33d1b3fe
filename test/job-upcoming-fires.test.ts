// Scheduled jobs across daylight saving, end to end: a real gateway runs an app whose jobs are
// at 02:30 and 01:30 in New York. The alarm's own path (the test build's injectable clock runs
// the same fire) sets each next fire by the zone's clock: on the spring-forward day the 02:30
// job fires once, at 03:00 EDT; on the fall-back day the 01:30 job fires once, at its first
// occurrence. The owner and the author see a job's upcoming fires through
// GET /api/apps/<name>/jobs?from=&count= and `personalclaw apps jobs --from --count`.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorCode, repoRoot, runCli, startGateway, type RunningGateway } from "./helpers/gateway";
import { install, waitForRow } from "./helpers/backends";

const APP = "dst-notes";

interface Job {
  name: string;
  nextFire: string | null;
  history: Array<{ scheduledFor: string; outcome: string }>;
  upcoming?: string[];
}

describe("scheduled jobs across daylight saving", () => {
  let root: string;
  let gw: RunningGateway;

  const jobs = async (query = ""): Promise<Job[]> => {
    const answer = await gw.fetch(`/api/apps/${APP}/jobs${query}`);
    expect(answer.status).toBe(200);
    return ((await answer.json()) as { jobs: Job[] }).jobs;
  };
  const job = async (name: string, query = "") => (await jobs(query)).find((j) => j.name === name)!;

  /** Runs the jobs due at `iso` as the alarm would (test build: X-Test-Now through the internal credential). */
  const runAt = async (iso: string) => {
    const answer = await gw.fetch(`/api/apps/${APP}/jobs`, {
      owner: false,
      headers: {
        "x-test-now": String(Date.parse(iso)),
        "x-internal-secret": readFileSync(join(gw.home, ".local_secret"), "utf8").trim(),
        "x-personalclaw-work": "cli:test-clock",
      },
    });
    expect(answer.status).toBe(200);
  };

  beforeAll(async () => {
    // Under /var/tmp: the sandbox gives a backend its own /tmp.
    root = mkdtempSync("/var/tmp/pc-job-dst-");
    const folder = join(root, APP);
    cpSync(join(repoRoot, "apps", "fixtures", "mcp-notes"), folder, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(folder, "app.json"), "utf8"));
    const tick = { route: "/jobs/tick", timeoutSeconds: 10, timezone: "America/New_York" };
    manifest.name = APP;
    manifest.crons = [
      { name: "nightly", schedule: "30 2 * * *", ...tick },
      { name: "late", schedule: "30 1 * * *", ...tick },
    ];
    writeFileSync(join(folder, "app.json"), JSON.stringify(manifest));
    gw = await startGateway({ home: join(root, "home") });
    await install(gw.home, folder);
    expect((await waitForRow(gw, APP, (row) => row.healthy))?.healthy).toBe(true);
  }, 90_000);

  afterAll(async () => {
    await gw?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("the alarm's path sets the next fire by the zone's clock on both change days", async () => {
    // Spring forward, 14 March 2027: 02:30 does not exist; the job fires once, at 03:00 EDT.
    await runAt("2027-03-13T12:00:00Z");
    expect((await job("nightly")).nextFire).toBe("2027-03-14T07:00:00.000Z");
    await runAt("2027-03-14T07:00:01Z");
    expect((await job("nightly")).nextFire).toBe("2027-03-15T06:30:00.000Z");
    // Fall back, 7 November 2027: 01:30 comes twice; the job fires at the first, then the next day.
    await runAt("2027-11-06T12:00:00Z");
    expect((await job("late")).nextFire).toBe("2027-11-07T05:30:00.000Z");
    await runAt("2027-11-07T05:30:01Z");
    expect((await job("late")).nextFire).toBe("2027-11-08T06:30:00.000Z");
    // Each of those fires reached the backend once.
    const late = await job("late");
    expect(late.history.filter((r) => r.scheduledFor === "2027-11-07T05:30:00.000Z")).toHaveLength(1);
    expect(late.history.some((r) => r.scheduledFor === "2027-11-07T06:30:00.000Z")).toBe(false);
  });

  it("answers each job's upcoming fires after a given time, and refuses a malformed question", async () => {
    expect((await job("nightly")).upcoming).toBeUndefined();
    const spring = await job("nightly", "?from=2027-03-13T00:00:00Z&count=3");
    expect(spring.upcoming).toEqual([
      "2027-03-13T07:30:00.000Z",
      "2027-03-14T07:00:00.000Z",
      "2027-03-15T06:30:00.000Z",
    ]);
    const fall = await job("late", `?from=${encodeURIComponent("2027-11-06T00:00:00-04:00")}&count=3`);
    expect(fall.upcoming).toEqual(["2027-11-06T05:30:00.000Z", "2027-11-07T05:30:00.000Z", "2027-11-08T06:30:00.000Z"]);
    for (const bad of ["?count=0", "?count=101", "?from=yesterday&count=2", "?from=2027-03-13&count=2", "?every=1"]) {
      const answer = await gw.fetch(`/api/apps/${APP}/jobs${bad}`);
      expect(answer.status, bad).toBe(400);
      expect(await errorCode(answer), bad).toBe("bad_request");
    }
  });

  it("`apps jobs --from --count` lists the upcoming fires in UTC and in the job's zone", async () => {
    const cli = (args: string[]) => runCli([...args, "--home", gw.home]);
    const json = await cli(["apps", "jobs", APP, "--from", "2027-03-13", "--count", "2", "--json"]);
    expect(json.code, json.stderr).toBe(0);
    const nightly = (JSON.parse(json.stdout).jobs as Job[]).find((j) => j.name === "nightly")!;
    expect(nightly.upcoming).toEqual(["2027-03-13T07:30:00.000Z", "2027-03-14T07:00:00.000Z"]);
    const text = await cli(["apps", "jobs", APP, "--from", "2027-03-13T00:00:00Z", "--count", "2"]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain("2027-03-14T07:00:00.000Z  2027-03-14 03:00 America/New_York");
    const refused = await cli(["apps", "jobs", APP, "--count", "0"]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("is not a count");
  });
});
