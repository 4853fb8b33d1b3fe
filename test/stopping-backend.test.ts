// A backend that is stopping is answered 503 at once (DESIGN.md: the proxy answers 503 while a
// backend is not healthy). The bridge tells the gateway a backend is stopping before it signals
// it, so a request never waits on a backend that is going away. The real gateway, real
// bubblewrap, and a backend whose shutdown takes four seconds during which it answers nothing.
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorCode, repoRoot, startGateway, type RunningGateway } from "./helpers/gateway";
import { install, waitForRow } from "./helpers/backends";

const APP = "slow-stop";
const fixture = join(repoRoot, "test", "fixtures", "backend-apps", APP);

interface Answer {
  status: number;
  code: string | undefined;
  ms: number;
}

async function proxied(gw: RunningGateway): Promise<Answer> {
  const started = Date.now();
  const response = await gw.fetch(`/apps/${APP}/api/ping`, { signal: AbortSignal.timeout(15_000) });
  const code = response.status === 200 ? (await response.text(), undefined) : await errorCode(response);
  return { status: response.status, code, ms: Date.now() - started };
}

describe("a backend that is stopping", () => {
  let root: string;
  let gw: RunningGateway;

  beforeAll(async () => {
    // Under /var/tmp: the sandbox gives a backend its own /tmp.
    root = mkdtempSync("/var/tmp/pc-stopping-");
    gw = await startGateway({ home: join(root, "home") });
    await install(gw.home, fixture);
    expect((await waitForRow(gw, APP, (row) => row.healthy))?.healthy).toBe(true);
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  for (const [what, path] of [
    ["restarted", `/api/apps/${APP}/restart`],
    ["disabled", `/api/apps/${APP}/disable`],
  ] as const) {
    it(`is answered 503 app_backend_unavailable at once while it is ${what}, never after a wait`, async () => {
      expect((await proxied(gw)).status).toBe(200);
      const transition = gw.fetch(path, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      let done = false;
      void transition.finally(() => (done = true));
      // Requests one after another for as long as the stop takes (the backend's four seconds).
      const answers: Answer[] = [];
      while (!done) {
        answers.push(await proxied(gw));
        await new Promise((r) => setTimeout(r, 100));
      }
      expect((await transition).status).toBe(200);
      const refused = answers.filter((a) => a.status === 503);
      expect(refused.length, JSON.stringify(answers)).toBeGreaterThan(5);
      for (const answer of refused) expect(answer.code).toBe("app_backend_unavailable");
      // None waited on the backend that was going away (without the change: each waited out its cleanup).
      expect(Math.max(...answers.map((a) => a.ms)), JSON.stringify(answers)).toBeLessThan(1_000);
      if (what === "restarted") {
        expect((await waitForRow(gw, APP, (row) => row.healthy))?.healthy).toBe(true);
        expect((await proxied(gw)).status).toBe(200);
      }
    });
  }
});
