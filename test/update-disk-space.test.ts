// An update on a disk without room for it. The copy of data/ needs about twice data/ free
// (host-bridge/install/update-room.ts): an update without that room is refused before the app's
// backend is stopped (507 update_needs_disk_space), and one whose copy still runs out of disk
// answers 507 storage_full naming the step, the previous version back with its data. The real
// gateway on a home that is a small tmpfs (the suite runs as root), a probe app writing rows,
// 12 MiB of data/ that cannot be stored as holes, and a filler file that takes the rest.
import { execFileSync } from "node:child_process";
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statfsSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createHash, randomBytes } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type RunningGateway } from "./helpers/gateway";
import { backendOf, install } from "./helpers/backends";
import { APP, appRow, post, proxied, waitForPause, waitHealthy, writeProbe } from "./helpers/probe-app";

const MIB = 1024 * 1024;
const BALLAST_BYTES = 12 * MIB;

function freeBytes(folder: string): number {
  const fs = statfsSync(folder);
  return fs.bavail * fs.bsize;
}

/** Writes `filler` until the disk of `folder` has about `leave` bytes free. */
function fillUntil(folder: string, filler: string, leave: number): void {
  const fd = openSync(filler, "a");
  try {
    const chunk = Buffer.alloc(MIB, 1);
    while (freeBytes(folder) > leave) writeSync(fd, chunk, 0, Math.min(MIB, freeBytes(folder) - leave));
  } finally {
    closeSync(fd);
  }
}

function sha256(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

describe("an update on a disk without room for it", () => {
  let root: string;
  let home: string;
  let gw: RunningGateway;
  let v2: string;
  let ballast: string;
  let ballastHash: string;
  const filler = () => join(home, "filler");

  beforeAll(async () => {
    root = await mkdtemp("/var/tmp/pc-update-room-");
    home = join(root, "home");
    mkdirSync(home);
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=64m", "tmpfs", home]);
    gw = await startGateway({ home });
    await install(home, await writeProbe(root, "1.0.0"));
    v2 = await writeProbe(root, "2.0.0");
    await waitHealthy(gw, "1.0.0");
    // Random bytes: the copy stores a run of zeros as a hole, so zeros would take no room.
    ballast = join(home, "apps", APP, "data", "ballast.bin");
    const fd = openSync(ballast, "w", 0o600);
    for (let i = 0; i < BALLAST_BYTES / MIB; i += 1) writeSync(fd, randomBytes(MIB));
    closeSync(fd);
    ballastHash = sha256(ballast);
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    try {
      execFileSync("umount", ["-l", home]);
    } catch {
      // never mounted
    }
    await rm(root, { recursive: true, force: true });
  });

  it("is refused before the backend stops when the disk lacks twice data/, saying what it needs", async () => {
    const before = await backendOf(gw, APP);
    // Room for the data once, not twice.
    fillUntil(home, filler(), BALLAST_BYTES + 10 * MIB);
    const refused = await post(gw, `/api/apps/${APP}/update`, { source: v2 }).finally(() => rmSync(filler()));
    expect(refused.status, JSON.stringify(refused.body)).toBe(507);
    expect(refused.body.error.code).toBe("update_needs_disk_space");
    expect(refused.body.error.message).toMatch(/needs \d+\.\d MiB free .*twice its data\/, \d+\.\d MiB/);
    expect(refused.body.error.detail.data_bytes).toBeGreaterThanOrEqual(BALLAST_BYTES);
    expect(refused.body.error.detail).toMatchObject({ step: "disk_space" });
    expect(refused.body.error.detail.needed_bytes).toBeGreaterThanOrEqual(2 * BALLAST_BYTES);
    expect(refused.body.error.detail.free_bytes).toBeLessThan(refused.body.error.detail.needed_bytes);
    // Nothing changed: the same backend run serves version 1 without a restart.
    const after = await backendOf(gw, APP);
    expect(after).toMatchObject({ healthy: true, pid: before!.pid, startedAt: before!.startedAt });
    expect((await appRow(gw))?.version).toBe("1.0.0");
    expect(existsSync(join(home, "journal", `${APP}.json`))).toBe(false);
  });

  it(
    "answers 507 storage_full naming copy_data when the copy runs out of disk, and the old version runs with its data",
    {
      timeout: 120_000,
    },
    async () => {
      writeFileSync(join(home, "test-pause-at"), "update:copy_data:started");
      const pending = post(gw, `/api/apps/${APP}/update`, { source: v2 });
      await waitForPause(home, "update:copy_data:started");
      // Past the check, something else takes the disk: the copy cannot fit.
      fillUntil(home, filler(), 4 * MIB);
      rmSync(join(home, "test-pause-at"));
      const failed = await pending.finally(() => rmSync(filler()));
      expect(failed.status, JSON.stringify(failed.body)).toBe(507);
      expect(failed.body.error.code).toBe("storage_full");
      expect(failed.body.error.message).toContain("at the update's step 'copy_data'");
      expect(failed.body.error.detail).toMatchObject({ step: "copy_data" });
      expect((await appRow(gw))?.version).toBe("1.0.0");
      await waitHealthy(gw, "1.0.0");
      expect((await proxied(gw)).body).toMatchObject({ version: "1.0.0" });
      expect(sha256(ballast)).toBe(ballastHash);
      expect(existsSync(join(home, "apps", `.${APP}.rollback`))).toBe(false);
      expect(existsSync(join(home, "journal", `${APP}.json`))).toBe(false);

      // With the room back, the same update goes through, no restart needed.
      const updated = await post(gw, `/api/apps/${APP}/update`, { source: v2 });
      expect(updated.status, JSON.stringify(updated.body)).toBe(200);
      await waitHealthy(gw, "2.0.0");
      expect(sha256(ballast)).toBe(ballastHash);
    },
  );
});
