// A Python backend behind the real gateway and bubblewrap (issue 34.5 and 34.6): the launcher's
// relay in front of a non-Node backend carries every answer whole, HTTP/1.0 and HTTP/1.1, with
// and without Content-Length; a proxied failure is readable by the app's sandboxed page like a
// success; and a handler that logs a burst inside a request never fails it (its stderr blocks
// instead of answering EAGAIN).
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { install, waitForRow } from "./helpers/backends";
import { gatewayPerSuite, repoRoot } from "./helpers/gateway";

const fixtureApps = join(repoRoot, "test", "fixtures", "backend-apps");
const VARIANTS = [
  { name: "py-relay", version: "HTTP/1.0" },
  { name: "py-relay-kept", version: "HTTP/1.1" },
] as const;

describe("a Python backend through the launcher's relay", () => {
  // A home outside /tmp, as an owner's is (the sandbox's /tmp is private), and the system's
  // python3 first: a root gateway's children run as nobody, who cannot use an interpreter
  // installed under root's own 0700 home (pyenv in /root).
  const gw = gatewayPerSuite({
    home: mkdtempSync("/var/tmp/pc-py-relay-home-"),
    env: { PATH: `/usr/local/bin:/usr/bin:/bin:${process.env.PATH}` },
  });
  const scratch = mkdtempSync(join(tmpdir(), "pc-py-relay-"));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  beforeAll(async () => {
    for (const { name, version } of VARIANTS) {
      const folder = join(scratch, name);
      cpSync(join(fixtureApps, "py-relay"), folder, { recursive: true });
      const manifest = JSON.parse(readFileSync(join(folder, "app.json"), "utf8"));
      writeFileSync(
        join(folder, "app.json"),
        JSON.stringify({ ...manifest, name, backend: { ...manifest.backend, args: ["server.py", version] } }),
      );
      await install(gw.home, folder);
    }
    await install(gw.home, join(fixtureApps, "crash-loop"));
    for (const { name } of VARIANTS) {
      const row = await waitForRow(gw, name, (r) => r.healthy, 30_000);
      expect(row?.healthy, `${name} never became healthy: ${JSON.stringify(row)}`).toBe(true);
    }
  }, 120_000);

  for (const { name, version } of VARIANTS) {
    it(`answers 200 mixed POST and GET requests whole, none 503, over ${version}`, async () => {
      const failed: string[] = [];
      let posted = 0;
      // In rounds like an app's page: a POST, two GETs and an answer ended by the close, four at a time.
      for (let round = 0; round < 50; round++) {
        const answers = await Promise.all([
          gw.fetch(`/apps/${name}/api/notes`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ round }),
          }),
          gw.fetch(`/apps/${name}/api/notes`),
          gw.fetch(`/apps/${name}/api/notes?again=1`),
          gw.fetch(`/apps/${name}/api/unsized`),
        ]);
        const texts = await Promise.all(answers.map((a) => a.text()));
        const whole = [/^\{"stored": \d+\}$/, /"count": \d+\}$/, /"count": \d+\}$/, /^x{32767}\n$/];
        answers.forEach((answer, i) => {
          if (answer.status >= 300 || !whole[i]!.test(texts[i]!))
            failed.push(`round ${round} request ${i}: ${answer.status} ${texts[i]!.slice(0, 160)}`);
        });
        if (answers[0]!.status === 201) posted += 1;
      }
      expect(failed).toEqual([]);
      expect(posted).toBe(50);
    });

    it(`a handler that logs 10 000 lines inside a request answers it, over ${version}`, async () => {
      // Its stdout and stderr are its own, and block as a program expects.
      const stdio = await gw.fetch(`/apps/${name}/api/stdio`);
      expect(await stdio.json()).toMatchObject({ "1": { nonblocking: false }, "2": { nonblocking: false } });
      const answer = await gw.fetch(`/apps/${name}/api/log?lines=10000`);
      expect(answer.status).toBe(200);
      expect(await answer.json()).toEqual({ logged: 10000 });
      // The backend lived through it, and its log reached the bridge.
      const row = await waitForRow(gw, name, (r) => r.lastLines.some((line) => /line 9999 of a burst/.test(line)));
      expect(row?.healthy).toBe(true);
    });
  }

  it("a proxied failure carries the sandboxed page's CORS answer, as a success does", async () => {
    const success = await gw.fetch("/apps/py-relay/api/notes", { headers: { origin: "null" } });
    expect(success.status).toBe(200);
    expect(success.headers.get("access-control-allow-origin")).toBe("null");
    const down = await gw.fetch("/apps/crash-loop/api/anything", { headers: { origin: "null" } });
    expect(down.status).toBe(503);
    expect(((await down.json()) as { error: { code: string } }).error.code).toBe("app_backend_unavailable");
    expect(down.headers.get("access-control-allow-origin")).toBe("null");
    expect(down.headers.get("vary")).toMatch(/origin/i);
    // Another site still reads nothing.
    const elsewhere = await gw.fetch("/apps/crash-loop/api/anything");
    expect(elsewhere.headers.get("access-control-allow-origin")).toBeNull();
  });
});
