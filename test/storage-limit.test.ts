// An app's storage limit and the gateway's reserve, on a real gateway started by the real
// `personalclaw start`, real bubblewrap and a really full disk (a small tmpfs as the home's
// filesystem; the suite runs as root).
import { execFileSync } from "node:child_process";
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeHome, removeHome, repoRoot, runCli, startGateway, type RunningGateway } from "./helpers/gateway";
import { install, waitForRow } from "./helpers/backends";
import { folderBytes, storageShares } from "../host-bridge/sandbox/storage-limit";
import { reserveFile } from "../host-bridge/storage-reserve";

const fixtureApps = join(repoRoot, "test", "fixtures", "backend-apps");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface LoggedEvent {
  kind: string;
  subject: string;
  outcome: string;
  detail: Record<string, unknown>;
}

async function eventsOf(gw: RunningGateway, kind: string): Promise<LoggedEvent[]> {
  const response = await gw.fetch(`/api/security/events?kind=${kind}`);
  expect(response.status, await response.clone().text()).toBe(200);
  return ((await response.json()) as { events: LoggedEvent[] }).events;
}

async function waitUntil(done: () => boolean | Promise<boolean>, timeoutMs: number, stepMs = 100): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await done()) return true;
    await sleep(stepMs);
  }
  return done();
}

describe("an app's storage limit", () => {
  let home: string;
  let gw: RunningGateway;
  const storageMb = 64;

  beforeAll(async () => {
    home = makeHome("pc-storage-");
    writeFileSync(join(home, "config.json"), JSON.stringify({ sandbox: { limits: { storage_mb: storageMb } } }));
    gw = await startGateway({ home });
  });
  afterAll(async () => {
    await gw?.stop();
    removeHome(home);
  });

  it("a backend that fills data/ past its limit is stopped within seconds, stays down, and the stop names it in the log", async () => {
    await install(home, join(fixtureApps, "storage-hog"));
    const row = await waitForRow(gw, "storage-hog", (r) => /storage limit/.test(r.reason ?? ""), 30_000);
    expect(row?.reason ?? "").toMatch(/storage limit/);
    expect(row?.running).toBe(false);
    // Stopped within a few seconds of its start, having written not much past its share.
    const stoppedAt = Date.parse(row!.exit!.at);
    expect(stoppedAt - Date.parse(row!.startedAt!)).toBeLessThan(5_000);
    const { dataBytes } = storageShares(storageMb * 1024 * 1024);
    const data = join(home, "apps", "storage-hog", "data");
    const held = await folderBytes(data);
    expect(held).toBeGreaterThan(dataBytes);
    expect(held).toBeLessThan(dataBytes + 2 * 1024 ** 3);
    const events = await eventsOf(gw, "app_limit_reached");
    const stop = events.find((e) => e.subject === "storage-hog" && e.detail.limit === "storage");
    expect(stop, JSON.stringify(events)).toBeDefined();
    expect(stop!.detail.storage_bytes).toBe(storageMb * 1024 * 1024);
    // It stays down: nothing writes data/ any more.
    const files = readdirSync(data).length;
    await sleep(2_500);
    expect(readdirSync(data).length).toBe(files);
    expect((await waitForRow(gw, "storage-hog", () => true))?.running).toBe(false);
  });
});

/** Fills the filesystem holding `dir` to its last byte; answers the filler's path. */
function fillDisk(dir: string): string {
  const filler = join(dir, "filler.bin");
  const fd = openSync(filler, "w");
  for (const size of [1 << 20, 1 << 16, 4096, 512, 1]) {
    const chunk = Buffer.alloc(size, 1);
    for (;;) {
      try {
        if (writeSync(fd, chunk) < size) break;
      } catch {
        break;
      }
    }
  }
  closeSync(fd);
  return filler;
}

describe("the gateway's reserve on a full disk", () => {
  const mount = mkdtempSync(join(tmpdir(), "pc-reserve-"));
  let gw: RunningGateway;

  beforeAll(async () => {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=256m", "tmpfs", mount]);
    mkdirSync(join(mount, "home"), { mode: 0o700 });
    gw = await startGateway({ home: join(mount, "home") });
  });
  afterAll(async () => {
    await gw?.stop();
    execFileSync("umount", ["-l", mount]);
    rmSync(mount, { recursive: true, force: true });
  });

  it("the owner still reads the log with the refusals just made, mints a sign-in link and uninstalls the app", async () => {
    const reserve = reserveFile(gw.home);
    expect(await waitUntil(() => existsSync(reserve), 10_000)).toBe(true);
    expect(statSync(reserve).size).toBeGreaterThanOrEqual(32 * 1024 * 1024);
    await install(gw.home, join(repoRoot, "apps", "fixtures", "node-notes"));

    // Something else fills the disk to its last byte.
    fillDisk(mount);
    expect(await waitUntil(() => !existsSync(reserve), 5_000)).toBe(true);

    // Refusals made now are still rows.
    for (let i = 0; i < 3; i++) {
      const refused = await fetch(`${gw.base}/api/status`, { headers: { authorization: `Bearer nope${i}.wrong` } });
      expect([401, 403]).toContain(refused.status);
    }
    const page = await gw.fetch("/api/security/events?limit=100");
    expect(page.status, await page.clone().text()).toBe(200);
    const rows = ((await page.json()) as { events: LoggedEvent[] }).events;
    const released = rows.findIndex((e) => e.kind === "storage_reserve_released");
    // The refusals made on the full disk are rows, newer than the release.
    expect(
      rows.slice(0, released).some((e) => e.outcome === "refused"),
      JSON.stringify(rows.slice(0, 5)),
    ).toBe(true);
    expect((await eventsOf(gw, "storage_reserve_released")).length).toBe(1);

    const minted = await runCli(["token", "--home", gw.home]);
    expect(minted.code, minted.stdout + minted.stderr).toBe(0);
    expect(minted.stdout).toMatch(/token=/);

    const uninstalled = await runCli(["apps", "uninstall", "node-notes", "--purge-data", "--home", gw.home]);
    expect(uninstalled.code, uninstalled.stdout + uninstalled.stderr).toBe(0);
    expect(existsSync(join(gw.home, "apps", "node-notes"))).toBe(false);

    // Space returns: the reserve is made again.
    rmSync(join(mount, "filler.bin"));
    expect(await waitUntil(() => existsSync(reserve), 10_000)).toBe(true);
  });
});
