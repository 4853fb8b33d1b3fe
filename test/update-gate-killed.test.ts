// An update of an app that declares no storage runs two backends during its health gate (the old
// one answering, the new one starting beside it). Killed there — the whole gateway (kill -9 of
// its process group), or at the switch, or workerd alone — the next start leaves one version
// running, the one its record names, with no journal, rollback copy or second run record; the
// update can be retried. The real gateway with real bubblewrap.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventually, makeHome, removeHome, startGateway, workerdPidOf, type RunningGateway } from "./helpers/gateway";
import { install, waitForRow } from "./helpers/backends";
import { post, waitForPause, type Json } from "./helpers/probe-app";
import { BESIDE, besideAnswer, waitForListening, writeBeside } from "./helpers/beside-app";

async function killGroup(gw: RunningGateway): Promise<void> {
  try {
    process.kill(-gw.pid, "SIGKILL");
  } catch {
    // already gone
  }
  await gw.stop("SIGKILL");
}

describe("killed while an update's two versions run side by side", () => {
  let root: string;
  let home: string;
  let gw: RunningGateway;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "pc-gatekill-"));
    home = makeHome("pc-gatekill-home-");
    gw = await startGateway({ home, detached: true });
    await install(home, await writeBeside(root, "1.0.0"));
    await waitForRow(gw, BESIDE, (b) => b.running && b.healthy, 30_000);
  }, 90_000);
  afterAll(async () => {
    await gw?.stop();
    removeHome(home);
    await rm(root, { recursive: true, force: true });
  });

  /** One version runs, the record's: its folder, its answers, one run record, nothing of the update left. */
  async function expectOneVersion(version: string): Promise<void> {
    const row = (await eventually(
      async () => (await gw.fetch(`/api/apps/${BESIDE}`)).json() as Promise<Json>,
      (r) => r.backend?.running && r.backend?.healthy,
      30_000,
    )) as Json;
    expect(row.version).toBe(version);
    const onDisk = JSON.parse(readFileSync(join(home, "apps", BESIDE, "app.json"), "utf8")) as Json;
    expect(onDisk.version).toBe(version);
    expect(existsSync(join(home, "journal", `${BESIDE}.json`))).toBe(false);
    expect(existsSync(join(home, "apps", `.${BESIDE}.rollback`))).toBe(false);
    expect(readdirSync(join(home, "apps", ".quarantine"))).toEqual([]);
    const records = readdirSync(join(home, "run", "backends")).filter((f) => f.startsWith(`${BESIDE}.`));
    expect(records).toHaveLength(1);
    expect(await besideAnswer(gw)).toEqual({ status: 200, version });
  }

  it("the whole gateway killed while the new version starts beside the old: the old version runs alone after the next start", async () => {
    const folder = await writeBeside(root, "2.0.0", { healthyAfterMs: 120_000 });
    const pending = post(gw, `/api/apps/${BESIDE}/update`, { source: folder }).catch(() => null);
    await waitForListening(home, "2.0.0");
    // Mid-gate: the new one listens but is not healthy, and the old one still answers.
    expect(await besideAnswer(gw)).toEqual({ status: 200, version: "1.0.0" });
    await killGroup(gw);
    await pending;
    gw = await startGateway({ home, detached: true });
    await expectOneVersion("1.0.0");
    // The update can be retried.
    const retried = await post(gw, `/api/apps/${BESIDE}/update`, { source: await writeBeside(root, "2.1.0") });
    expect(retried.status, JSON.stringify(retried.body)).toBe(200);
    await expectOneVersion("2.1.0");
  }, 180_000);

  it("the whole gateway killed at the switch, after the gate passed: the new version runs alone after the next start", async () => {
    const folder = await writeBeside(root, "3.0.0", { healthyAfterMs: 500 });
    writeFileSync(join(home, "test-pause-at"), "update:switch:started");
    const pending = post(gw, `/api/apps/${BESIDE}/update`, { source: folder }).catch(() => null);
    await waitForPause(home, "update:switch:started");
    // Healthy beside it, not switched to yet: the old one still answers.
    expect(await besideAnswer(gw)).toEqual({ status: 200, version: "2.1.0" });
    await killGroup(gw);
    await pending;
    rmSync(join(home, "test-pause-at"), { force: true });
    gw = await startGateway({ home, detached: true });
    await expectOneVersion("3.0.0");
  }, 180_000);

  it("workerd alone killed mid-gate: the bridge finishes the gate and the switch, and the update is settled once workerd is back", async () => {
    const folder = await writeBeside(root, "4.0.0", { healthyAfterMs: 3_000 });
    const pending = post(gw, `/api/apps/${BESIDE}/update`, { source: folder }).catch(() => null);
    await waitForListening(home, "4.0.0");
    const killed = workerdPidOf(home);
    process.kill(killed, "SIGKILL");
    await pending;
    await eventually(
      async () => (await gw.fetch(`/api/apps/${BESIDE}`)).json() as Promise<Json>,
      (r) => r.version === "4.0.0" && !existsSync(join(home, "journal", `${BESIDE}.json`)),
      60_000,
    );
    expect(workerdPidOf(home)).not.toBe(killed);
    await expectOneVersion("4.0.0");
    // A full restart keeps it.
    await gw.stop();
    gw = await startGateway({ home, detached: true });
    await expectOneVersion("4.0.0");
  }, 180_000);
});
