// Confinement end to end: the real `personalclaw start`, real installs through the CLI, real
// bubblewrap and real bounds. A bundle built to run its own code at install time never runs
// it outside the sandbox, and a fork or memory bomb is stopped at its limit and logged.
//
// The home lives under /var/tmp, not /tmp: every app child gets a private /tmp, which would
// hide a canary written there and make "never written" pass for the wrong reason.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliPath, repoRoot, runCli, startGateway, type RunningGateway } from "./helpers/gateway";
import { install, waitForRow } from "./helpers/backends";
import { boundsAvailability } from "../host-bridge/sandbox/bounds";
import { descendantPids } from "./helpers/process-tree";
import { mcpLineAgent } from "./helpers/mcp-line-agent";

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

/** Every process below `root` (by parent pid), with its program's name and its starting environment. */
function descendants(root: number): Array<{ pid: number; program: string; env: Record<string, string> }> {
  const found: Array<{ pid: number; program: string; env: Record<string, string> }> = [];
  for (const pid of descendantPids(root)) {
    try {
      const env = Object.fromEntries(
        readFileSync(`/proc/${pid}/environ`, "utf8")
          .split("\0")
          .filter(Boolean)
          .map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]),
      );
      found.push({ pid, program: basename(readlinkSync(`/proc/${pid}/exe`)), env });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** The programs of a confined start that run on the host, before or around the sandbox. */
/** A stdio MCP server with one read-only tool, `env`, answering two variables of its own environment. */
const MCP_ENV_SERVER = `import { createInterface } from "node:readline";
const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\\n");
const ENV = { name: "env", description: "Two variables.", inputSchema: { type: "object" },
  annotations: { readOnlyHint: true, openWorldHint: false } };
createInterface({ input: process.stdin }).on("line", (line) => {
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  if (m.method === "initialize") return send({ id: m.id, result: { protocolVersion: m.params.protocolVersion,
    capabilities: { tools: {} }, serverInfo: { name: "env", version: "0.1.0" } } });
  if (m.method === "tools/list") return send({ id: m.id, result: { tools: [ENV] } });
  if (m.method === "tools/call") return send({ id: m.id, result: { content: [{ type: "text",
    text: JSON.stringify({ mark: process.env.PCTEST_MARK ?? null, preload: process.env.LD_PRELOAD ?? null }) }] } });
  send({ id: m.id, result: {} });
});
`;

const HOST_SIDE = new Set(["bwrap", "prlimit", "systemd-run"]);
const HOST_SIDE_NAMES = ["DBUS_SESSION_BUS_ADDRESS", "PATH", "XDG_RUNTIME_DIR"];

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

  it("an app's declared environment reaches its child in the box and never the programs that build the box", async () => {
    // A loader variable in bwrap's own environment would run a library the app ships on the
    // host, before any namespace exists, with the owner's rights.
    const app = join(root, "env-preload");
    mkdirSync(app, { recursive: true });
    const declared = {
      LD_PRELOAD: "./preload.so",
      LD_AUDIT: "./preload.so",
      LD_LIBRARY_PATH: ".",
      GLIBC_TUNABLES: "glibc.malloc.check=3",
      GCONV_PATH: ".",
      PCTEST_MARK: "declared",
    };
    writeFileSync(
      join(app, "app.json"),
      JSON.stringify({
        name: "env-preload",
        version: "0.1.0",
        description: "Test fixture: an MCP server whose declared environment names the dynamic loader's variables.",
        permissions: { api: [], network: false },
        mcpServers: { s: { command: "node", args: ["server.mjs"], env: declared } },
      }),
    );
    writeFileSync(join(app, "server.mjs"), MCP_ENV_SERVER);
    await install(home, app, { HOME: ownerHome });
    const server = spawn(process.execPath, [cliPath, "mcp", "run", "env-preload", "s", "--home", home], {
      env: { ...process.env, HOME: ownerHome },
      stdio: ["pipe", "pipe", "pipe"],
    });
    try {
      // The child itself has what its manifest declared.
      expect(await mcpLineAgent(server).callJson("env")).toEqual({ mark: "declared", preload: "./preload.so" });
      const hostSide = descendants(server.pid!).filter((p) => HOST_SIDE.has(p.program));
      expect(hostSide.map((p) => p.program)).toContain("bwrap");
      for (const p of hostSide) {
        expect(
          Object.keys(p.env).filter((name) => !HOST_SIDE_NAMES.includes(name)),
          `${p.program} ${p.pid}`,
        ).toEqual([]);
      }
    } finally {
      server.stdin.end();
      server.kill("SIGKILL");
    }
    // And a backend: neither its secret nor any other variable of its own reaches its bwrap.
    await install(home, join(fixtureApps, "sandbox-probe"), { HOME: ownerHome });
    expect((await waitForRow(gw, "sandbox-probe", (r) => r.healthy))?.healthy).toBe(true);
    const backendSide = descendants(gw.pid).filter((p) => HOST_SIDE.has(p.program));
    expect(backendSide.map((p) => p.program)).toContain("bwrap");
    for (const p of backendSide)
      expect(
        Object.keys(p.env).filter((name) => !HOST_SIDE_NAMES.includes(name)),
        `${p.program} ${p.pid}`,
      ).toEqual([]);
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
