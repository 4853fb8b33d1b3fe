// An update's new version beside the running backend: real sandboxed children (the healthy
// fixture), one supervisor. The gateway hears nothing of the new one until it takes over, then
// one report carries its address, and the old one stops; a dropped one leaves the old untouched.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { BackendSupervisor, type BackendSpec, type SupervisedBackendStatus } from "./backend-supervisor.js";

const fixture = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../test/fixtures/backends/healthy.mjs");
let home: string;
let running: BackendSupervisor | null = null;

beforeAll(() => {
  // Outside /tmp: the sandbox's private /tmp would hide a home there.
  home = path.join(mkdtempSync(path.join("/var/tmp", "pc-successor-")), ".personalclaw");
  mkdirSync(home, { recursive: true });
});
afterEach(async () => {
  await running?.stopAll();
  running = null;
});
afterAll(() => rmSync(path.dirname(home), { recursive: true, force: true }));

/** A supervisor whose reports to the gateway are kept, and the app "beside" with the healthy fixture. */
function setUp(): { sup: BackendSupervisor; reports: SupervisedBackendStatus[]; spec: BackendSpec } {
  const reports: SupervisedBackendStatus[] = [];
  const sup = new BackendSupervisor({
    home,
    sandbox: { mode: "on" },
    parentEnv: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    passthrough: [],
    onChange: (_name, status) => reports.push(status),
    startupPollMs: 50,
    healthIntervalMs: 150,
    stopGraceMs: 1_500,
  });
  running = sup;
  const appDir = path.join(home, "apps", "beside");
  mkdirSync(path.join(appDir, "data"), { recursive: true });
  copyFileSync(fixture, path.join(appDir, "healthy.mjs"));
  const spec = {
    name: "beside",
    appDir,
    dataDir: path.join(appDir, "data"),
    hasStorage: false,
    backend: { command: process.execPath, args: [path.join(appDir, "healthy.mjs")] },
  };
  return { sup, reports, spec };
}

async function until(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await sleep(25);
  }
}

const runRecordNames = () => readdirSync(path.join(home, "run", "backends")).sort();

describe("an update's new version started beside the running backend", () => {
  it("is never reported while it waits; promoted, one report names its slot, and only then the old one stops", async () => {
    const { sup, reports, spec } = setUp();
    const old = await sup.start(spec);
    expect(old.ok && (await sup.waitForHealth("beside"))).toBe(true);
    sup.hold("beside");
    const next = await sup.startSuccessor(spec);
    if (!next.ok || !old.ok) throw new Error("not started");
    expect(next.slot).not.toBe(old.slot);
    await until("the new one is healthy", () => sup.successorStatus("beside")?.status.healthy === true);
    expect(runRecordNames()).toEqual(["beside.json", "beside.next.json"]);
    // Nothing the gateway heard names the new one; the current backend is still the old one.
    expect(reports.filter((r) => r.pid === next.pid || r.slot === next.slot)).toEqual([]);
    expect(sup.status("beside")).toMatchObject({ pid: old.pid, healthy: true });
    reports.length = 0;

    expect(await sup.promoteSuccessor("beside")).toBe(true);
    sup.release("beside");
    expect(reports[0]).toMatchObject({ pid: next.pid, slot: next.slot, healthy: true, running: true });
    // The old one is stopped after it, and never reported again (not as stopping, not as stopped).
    expect(reports.filter((r) => r.pid === old.pid)).toEqual([]);
    expect(existsSync(`/proc/${old.pid}`)).toBe(false);
    expect(sup.status("beside")).toMatchObject({ pid: next.pid, slot: next.slot, healthy: true });
    expect(sup.secretOf("beside")).toBe(next.secret);
    expect(runRecordNames()).toEqual(["beside.next.json"]);
    expect(sup.successorStatus("beside")).toBeNull();
  });

  it("dropped, it stops and the running backend goes on as it was, unreported", async () => {
    const { sup, reports, spec } = setUp();
    const old = await sup.start(spec);
    expect(old.ok && (await sup.waitForHealth("beside"))).toBe(true);
    reports.length = 0;
    sup.hold("beside");
    const next = await sup.startSuccessor(spec);
    if (!next.ok || !old.ok) throw new Error("not started");
    // A second one beside it is refused while the first waits.
    expect(await sup.startSuccessor(spec)).toMatchObject({ ok: false, code: "backend_already_running" });
    await sup.dropSuccessor("beside");
    sup.release("beside");
    expect(existsSync(`/proc/${next.pid}`)).toBe(false);
    expect(reports).toEqual([]);
    expect(sup.status("beside")).toMatchObject({ pid: old.pid, healthy: true, running: true });
    expect(runRecordNames()).toEqual(["beside.json"]);
  });
});
