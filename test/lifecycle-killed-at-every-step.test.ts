// A loop that kills the whole gateway (kill -9 of its process group) at each step of install,
// update and uninstall, paused there by the test build, and checks that the next start leaves
// the app entirely old or entirely new, with its data, and the operation retryable. The real
// gateway with real bubblewrap and a probe app writing rows into data/app.db throughout.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeHome, removeHome, startGateway, type RunningGateway } from "./helpers/gateway";
import {
  APP,
  appRow,
  dbRows,
  expectNoRowLost,
  post,
  proxied,
  sleep,
  waitForPause,
  waitHealthy,
  writeProbe,
  type Json,
} from "./helpers/probe-app";

async function startDetached(home: string): Promise<RunningGateway> {
  return startGateway({ home, detached: true });
}

async function killGroup(gw: RunningGateway): Promise<void> {
  try {
    process.kill(-gw.pid, "SIGKILL");
  } catch {
    // already gone
  }
  await gw.stop("SIGKILL");
  // The sandboxed backend dies with the bridge (bwrap --die-with-parent); give it a moment.
  await sleep(200);
}

interface Op {
  op: "install" | "update" | "uninstall";
  points: string[];
}

const OPS: Op[] = [
  {
    op: "install",
    points: [
      "stage:done",
      "consent:done",
      "verify:done",
      "move_into_place:started",
      "move_into_place:done",
      "commit:started",
    ],
  },
  {
    op: "update",
    points: [
      "consent:done",
      "stop_old:done",
      "copy_data:done",
      "keep_rollback:done",
      "install_hook:skipped",
      "move_into_place:done",
      "health:done",
      "commit:started",
    ],
  },
  { op: "uninstall", points: ["stop_backend:started", "remove_files:started", "remove_files:done", "commit:started"] },
];

describe("crash safety: the whole gateway killed at every step", () => {
  let root: string;
  let home: string;
  let v1: string;
  let v2: string;
  let gw: RunningGateway | null = null;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "pc-killloop-"));
    home = makeHome("pc-killloop-home-");
    v1 = await writeProbe(root, "1.0.0");
    v2 = await writeProbe(root, "2.0.0");
  });
  afterAll(async () => {
    await gw?.stop();
    removeHome(home);
    await rm(root, { recursive: true, force: true });
  });

  /** Old or new, never a mix; never a folder without a record or a record without a folder. */
  async function checkWhole(g: RunningGateway, op: Op["op"], rowsBefore: number): Promise<"old" | "new"> {
    const record = await appRow(g);
    const folder = join(home, "apps", APP);
    expect(existsSync(folder), `folder vs record ${JSON.stringify(record)}`).toBe(record !== null);
    expect(existsSync(join(home, "apps", `.${APP}.rollback`))).toBe(false);
    expect(existsSync(join(home, "journal", `${APP}.json`))).toBe(false);
    expect(readdirSync(join(home, "apps", ".quarantine"))).toEqual([]);
    if (record) {
      const onDisk = JSON.parse(readFileSync(join(folder, "app.json"), "utf8")) as Json;
      expect(onDisk.version).toBe(record.version);
      expect((await waitHealthy(g)).healthy).toBe(true);
      expect((await proxied(g)).body?.version).toBe(record.version);
    }
    if (op === "install") return record ? "new" : "old";
    if (op === "uninstall") {
      if (!record) {
        // Its data was parked, never lost.
        expect(existsSync(join(home, "apps", `.${APP}.data`, "app.db"))).toBe(true);
        return "new";
      }
      expect(record.version).toBe("2.0.0");
      expect(dbRows(home).filter((r) => r.version === "1.0.0" && r.kind === "row").length).toBeGreaterThanOrEqual(
        rowsBefore,
      );
      return "old";
    }
    expect(["1.0.0", "2.0.0"]).toContain(record!.version);
    const rows = dbRows(home);
    expectNoRowLost(rows, "1.0.0");
    expect(rows.filter((r) => r.version === "1.0.0" && r.kind === "row").length).toBeGreaterThanOrEqual(rowsBefore);
    return record!.version === "2.0.0" ? "new" : "old";
  }

  async function run(g: RunningGateway, op: Op["op"]): Promise<{ status: number; body: Json }> {
    if (op === "install") {
      const preview = await post(g, "/api/apps/preview", { source: v1 });
      return post(g, "/api/apps", {
        source: v1,
        consent: preview.body.digest,
        ...(existsSync(join(home, "apps", `.${APP}.data`)) ? { adopt_data: true } : {}),
      });
    }
    if (op === "update") return post(g, `/api/apps/${APP}/update`, { source: v2 });
    const response = await g.fetch(`/api/apps/${APP}`, {
      method: "DELETE",
      body: "{}",
      headers: { "content-type": "application/json" },
    });
    return { status: response.status, body: (await response.json()) as Json };
  }

  /** Brings the app to the state the operation starts from. */
  async function precondition(g: RunningGateway, op: Op["op"]): Promise<void> {
    const record = await appRow(g);
    if (op === "install") {
      if (record)
        expect(
          (
            await g.fetch(`/api/apps/${APP}`, {
              method: "DELETE",
              body: JSON.stringify({ purge_data: true }),
              headers: { "content-type": "application/json" },
            })
          ).status,
        ).toBe(200);
      await g.fetch(`/api/apps/parked/${APP}`, {
        method: "DELETE",
        body: "{}",
        headers: { "content-type": "application/json" },
      });
      return;
    }
    if (!record) {
      const answer = await run(g, "install");
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    } else if (op === "update" && record.version !== "1.0.0") {
      expect(
        (
          await g.fetch(`/api/apps/${APP}`, {
            method: "DELETE",
            body: "{}",
            headers: { "content-type": "application/json" },
          })
        ).status,
      ).toBe(200);
      expect((await run(g, "install")).status).toBe(200);
    }
    if (op === "uninstall" && (await appRow(g))!.version !== "2.0.0") expect((await run(g, "update")).status).toBe(200);
    await waitHealthy(g);
    await sleep(150);
  }

  it("every step of install, update and uninstall: the next start leaves the app whole, and the operation can be retried", async () => {
    const outcomes: string[] = [];
    gw = await startDetached(home);
    for (const { op, points } of OPS) {
      for (const point of points) {
        await precondition(gw, op);
        const rowsBefore = dbRows(home).filter((r) => r.version === "1.0.0" && r.kind === "row").length;
        writeFileSync(join(home, "test-pause-at"), `${op}:${point}`);
        const pending = run(gw, op).catch(() => null);
        await waitForPause(home, `${op}:${point}`);
        await killGroup(gw);
        await pending;
        rmSync(join(home, "test-pause-at"), { force: true });
        gw = await startDetached(home);
        const state = await checkWhole(gw, op, rowsBefore);
        outcomes.push(`${op}:${point}=${state}`);
        if (state === "old") {
          const retried = await run(gw, op);
          expect(retried.status, `${op} retried after a kill at ${point}: ${JSON.stringify(retried.body)}`).toBe(200);
          expect(await checkWhole(gw, op, rowsBefore)).toBe("new");
        }
      }
    }
    // Both outcomes occur: a kill before the record is written undoes, after it finishes.
    expect(outcomes.some((o) => o.endsWith("=old"))).toBe(true);
    expect(outcomes.some((o) => o.endsWith("=new"))).toBe(true);
    expect(outcomes).toContain("install:commit:started=new");
    expect(outcomes).toContain("update:commit:started=new");
    expect(outcomes).toContain("update:keep_rollback:done=old");
  }, 400_000);
});
