// When only workerd dies in the middle of an update, the bridge finishes its part alone; the
// transition is then settled as soon as workerd is back (host-bridge/install/transition-settlement.ts):
// the record, the folder, the app's secret, mcp.json, its jobs and its lock agree within
// seconds, without a gateway restart, and a later start never undoes what has been serving
// since. The real gateway, its real bridge and workerd, a probe app writing rows all the time;
// workerd alone is killed (kill -9) at each step of the update, paused there by the test build.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventually, makeHome, removeHome, startGateway, workerdPidOf, type RunningGateway } from "./helpers/gateway";
import { install } from "./helpers/backends";
import {
  APP,
  appRow,
  dbRows,
  expectNoRowLost,
  post,
  proxied,
  securityRows,
  sleep,
  waitForPause,
  waitHealthy,
  writeProbe,
  type Json,
} from "./helpers/probe-app";

const SECRET = "probe-secret-value-0123456789";
const secrets = [{ name: "PROBE_API_KEY", why: "the probe reports whether it arrived" }];

/** Version n of the probe declares the secret and one MCP server named after n. */
function versionOf(root: string, n: number): Promise<string> {
  return writeProbe(root, `${n}.0.0`, {
    secrets,
    mcpServers: { [`rows-${n}`]: { command: "python3", args: ["server.py"] } },
  });
}

/** The record, the folder, the secret, mcp.json, the journal and the lock agree on `version`. */
async function expectSettled(gw: RunningGateway, version: string, n: number): Promise<void> {
  const record = (await appRow(gw))!;
  expect(record.version).toBe(version);
  const onDisk = JSON.parse(readFileSync(join(gw.home, "apps", APP, "app.json"), "utf8")) as Json;
  expect(onDisk.version).toBe(version);
  expect(existsSync(join(gw.home, "journal", `${APP}.json`))).toBe(false);
  expect(existsSync(join(gw.home, "apps", `.${APP}.rollback`))).toBe(false);
  const mcp = JSON.parse(readFileSync(join(gw.home, "mcp.json"), "utf8")) as { mcpServers: Json };
  expect(Object.keys(mcp.mcpServers).filter((key) => key.startsWith(`${APP}:`))).toEqual([`${APP}:rows-${n}`]);
  await waitHealthy(gw, version);
  // The lock is released just after the journal goes; then the app takes a transition again.
  // The secret opens for the new install: the backend (restarted, so it opens it afresh) has it.
  const restarted = await eventually(
    () => post(gw, `/api/apps/${APP}/restart`, {}),
    (answer) => answer.status !== 409,
    5_000,
  );
  expect(restarted.status, JSON.stringify(restarted.body)).toBe(200);
  await waitHealthy(gw, version);
  const served = await proxied(gw);
  expect(served.body).toMatchObject({ version, secret: true });
}

describe("workerd alone dies during an update", () => {
  let root: string;
  let home: string;
  let gw: RunningGateway;
  let current = 1;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "pc-halfdies-"));
    home = makeHome("pc-halfdies-home-");
    gw = await startGateway({ home });
    await install(home, await versionOf(root, 1));
    expect(
      (
        await gw.fetch(`/api/secrets/PROBE_API_KEY`, {
          method: "PUT",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ value: SECRET }),
        })
      ).status,
    ).toBe(200);
    expect((await post(gw, "/api/secrets/PROBE_API_KEY/assign", { app: APP })).status).toBe(200);
    await expectSettled(gw, "1.0.0", 1);
  }, 120_000);

  afterAll(async () => {
    await gw?.stop();
    removeHome(home);
    await rm(root, { recursive: true, force: true });
  });

  for (const point of ["stage:done", "copy_data:started", "health:started", "health:done", "commit:started"]) {
    it(`killed at ${point}: settled within seconds of workerd's return, and a restart keeps it`, async () => {
      const next = current + 1;
      const folder = await versionOf(root, next);
      const preview = await post(gw, "/api/apps/preview", { source: folder, name: APP });
      expect(preview.status).toBe(200);
      writeFileSync(join(home, "test-pause-at"), `update:${point}`);
      const pending = post(gw, `/api/apps/${APP}/update`, { source: folder, consent: preview.body.digest }).catch(
        () => null,
      );
      await waitForPause(home, `update:${point}`);
      const killed = workerdPidOf(home);
      process.kill(killed, "SIGKILL");
      await pending;
      rmSync(join(home, "test-pause-at"), { force: true });

      // workerd is back and the update is settled, the lock released: no gateway restart.
      const settledIn = Date.now();
      const version = `${next}.0.0`;
      const record = await eventually(
        () => appRow(gw),
        (row) => row?.version === version && !existsSync(join(home, "journal", `${APP}.json`)),
        30_000,
      );
      expect(record?.version, `after a kill at ${point}`).toBe(version);
      expect(workerdPidOf(home)).not.toBe(killed);
      await expectSettled(gw, version, next);
      expect(Date.now() - settledIn).toBeLessThan(30_000);
      const updated = await securityRows(gw, ["app_updated"]);
      expect(updated.some((row) => row.detail?.to === version)).toBe(true);

      // Rows the new version wrote since are kept by a full restart: nothing is undone later.
      await sleep(300);
      const before = dbRows(home).filter((r) => r.version === version && r.kind === "row").length;
      expect(before).toBeGreaterThan(0);
      await gw.stop();
      gw = await startGateway({ home });
      expect((await appRow(gw))?.version).toBe(version);
      await waitHealthy(gw, version);
      const rows = dbRows(home);
      expectNoRowLost(rows, version);
      expect(rows.filter((r) => r.version === version && r.kind === "row").length).toBeGreaterThanOrEqual(before);
      current = next;
    }, 180_000);
  }
});
