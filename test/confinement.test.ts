// Confinement end to end: the real `personalclaw start`, real installs through the CLI, real
// bubblewrap and real bounds. A bundle built to run its own code at install time never runs
// it outside the sandbox, and a fork or memory bomb is stopped at its limit and logged.
//
// The home lives under /var/tmp, not /tmp: every app child gets a private /tmp, which would
// hide a canary written there and make "never written" pass for the wrong reason.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot, runCli, startGateway, type RunningGateway } from "./helpers/gateway";
import { install, waitForRow } from "./helpers/backends";
import { boundsAvailability } from "../host-bridge/sandbox/bounds";

const fixtureApps = join(repoRoot, "test", "fixtures", "backend-apps");
const hostile = join(repoRoot, "test", "fixtures", "hostile");
const CANARIES = ["venv", "pip", "ensurepip"].map((mod) => `personalclaw-canary-${mod}`);

interface LoggedEvent {
  kind: string;
  subject: string;
  detail: Record<string, unknown>;
}

async function eventsOf(gw: RunningGateway, kind: string): Promise<LoggedEvent[]> {
  const response = await gw.fetch(`/api/security/events?kind=${kind}`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { events: LoggedEvent[] }).events;
}

describe("confinement under a running gateway", () => {
  let root: string;
  let ownerHome: string;
  let home: string;
  let gw: RunningGateway;

  beforeAll(async () => {
    root = mkdtempSync("/var/tmp/pc-confine-");
    ownerHome = join(root, "owner");
    home = join(ownerHome, ".personalclaw");
    mkdirSync(home, { recursive: true });
    // Small limits, so the bombs reach them in a moment.
    writeFileSync(join(home, "config.json"), JSON.stringify({ sandbox: { limits: { processes: 48, memory_mb: 96 } } }));
    for (const canary of CANARIES) rmSync(join("/var/tmp", canary), { force: true });
    gw = await startGateway({ home, env: { HOME: ownerHome } });
  });

  afterAll(async () => {
    await gw?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it("a bundle shipping venv.py, pip.py and ensurepip.py installs its wheel without running any of them", async () => {
    await install(home, join(hostile, "install-shadows-tools"), { HOME: ownerHome });
    for (const canary of CANARIES) {
      expect(existsSync(join("/var/tmp", canary)), canary).toBe(false);
      expect(existsSync(join(ownerHome, canary)), canary).toBe(false);
    }
    // The installer did its work: the wheel is in the app's own venv.
    const venvLib = join(home, "apps", "install-shadows-tools", "venv", "lib");
    expect(existsSync(venvLib)).toBe(true);
    const log = readFileSync(join(home, "logs", "gateway.log"), "utf8");
    expect(log).not.toContain("ran outside the sandbox");
  });

  it("doctor names the mechanism that bounds app children and the limits", async () => {
    const result = await runCli(["doctor", "--json", "--home", home], { HOME: ownerHome });
    const rows = (JSON.parse(result.stdout) as { rows: Array<{ name: string; status: string; message: string }> }).rows;
    const bounds = rows.find((row) => row.name === "bounds");
    expect(bounds?.message).toContain(boundsAvailability(process.env.PATH).mechanism);
    expect(bounds?.message).toContain("48 processes, 96 MiB");
    const sandbox = rows.find((row) => row.name === "bubblewrap");
    expect(sandbox?.status).toBe("ok");
  });

  const cgroup = boundsAvailability(process.env.PATH).mechanism === "cgroup";

  it("a fork bomb is stopped at its process limit, and the stop is logged", async () => {
    // Without a cgroup the bridge cannot see a process limit reached (rlimit makes forks fail
    // silently, and root is exempt from it): the test states which mechanism it proves.
    expect(cgroup, "this machine offers cgroup bounds (root, as CI runs)").toBe(true);
    await install(home, join(fixtureApps, "fork-bomb"), { HOME: ownerHome });
    const row = await waitForRow(
      gw,
      "fork-bomb",
      (r) => /process limit/.test(r.reason ?? "") || /process limit/.test(JSON.stringify(r.exit ?? "")),
      30_000,
    );
    expect(row?.reason ?? "").toMatch(/process limit/);
    const events = await eventsOf(gw, "app_limit_reached");
    expect(events.some((e) => e.subject === "fork-bomb" && e.detail.limit === "processes")).toBe(true);
    await gw.fetch("/api/apps/fork-bomb/disable", {
      method: "POST",
      body: "{}",
      headers: { "content-type": "application/json" },
    });
  });

  it("a memory bomb is stopped at its memory limit, and the stop is logged", async () => {
    expect(cgroup, "this machine offers cgroup bounds (root, as CI runs)").toBe(true);
    await install(home, join(fixtureApps, "memory-bomb"), { HOME: ownerHome });
    const row = await waitForRow(gw, "memory-bomb", (r) => /memory limit/.test(r.reason ?? ""), 30_000);
    expect(row?.reason ?? "").toMatch(/memory limit/);
    const events = await eventsOf(gw, "app_limit_reached");
    expect(events.some((e) => e.subject === "memory-bomb" && e.detail.limit === "memory")).toBe(true);
    await gw.fetch("/api/apps/memory-bomb/disable", {
      method: "POST",
      body: "{}",
      headers: { "content-type": "application/json" },
    });
  });
});
