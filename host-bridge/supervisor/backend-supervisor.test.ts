// Real backends (small Node scripts), real bubblewrap, short intervals.
import {
  closeSync,
  copyFileSync,
  existsSync,
  openSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import http from "node:http";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { slotSocketName } from "../../kernel/contracts/backend-slots";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  BackendSupervisor,
  type BackendSpec,
  type SupervisedBackendStatus,
  type BackendSupervisorOptions,
} from "./backend-supervisor.js";
import { readRunRecords } from "./run-records.js";

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../test/fixtures/backends");
const node = process.execPath;
let root: string;
let home: string;
let ownerHome: string;
const supervisors: BackendSupervisor[] = [];

const parentEnv = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  LANG: "C.UTF-8",
  SLACK_BOT_TOKEN: "xoxb-111111111-222222222-abcdefabcdef",
  DEMO_API_TOKEN: "demo-token-value-0123456789",
  AWS_SECRET_ACCESS_KEY: "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY",
  SSH_AUTH_SOCK: "/tmp/ssh-agent.sock",
  RANDOM_SETTING: "something",
};

type Logged = { level: string; msg: string };

function makeSupervisor(over: Partial<BackendSupervisorOptions> = {}): {
  sup: BackendSupervisor;
  logs: Logged[];
  changes: SupervisedBackendStatus[];
} {
  const logs: Logged[] = [];
  const changes: SupervisedBackendStatus[] = [];
  const sup = new BackendSupervisor({
    home,
    ownerHome,
    sandbox: { mode: "on" },
    parentEnv: { ...parentEnv, HOME: ownerHome },
    passthrough: ["DEMO_API_TOKEN", "AWS_SECRET_ACCESS_KEY", "SSH_AUTH_SOCK"],
    log: (level, msg) => logs.push({ level, msg }),
    onChange: (_name, status) => changes.push(status),
    healthIntervalMs: 150,
    healthMisses: 3,
    startTimeoutMs: 8_000,
    startupPollMs: 50,
    stopGraceMs: 1_500,
    restartBackoffMs: 100,
    watchdogMs: 1_000,
    ...over,
  });
  supervisors.push(sup);
  return { sup, logs, changes };
}

let appCount = 0;
function makeApp(fixture: string, over: Partial<BackendSpec> & { args?: string[] } = {}): BackendSpec {
  appCount += 1;
  const name = over.name ?? `app-${appCount}`;
  const appDir = path.join(home, "apps", name);
  const dataDir = path.join(appDir, "data");
  mkdirSync(dataDir, { recursive: true });
  copyFileSync(path.join(fixtures, fixture), path.join(appDir, fixture));
  return {
    name,
    appDir,
    dataDir,
    hasStorage: over.hasStorage ?? true,
    backend: over.backend ?? { command: node, args: [path.join(appDir, fixture), ...(over.args ?? [])] },
  };
}

async function until(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await sleep(25);
  }
}

/** GET on a backend: through its slot's socket when confined (it has no host port), else its port. */
function get(at: { port: number | null; slot: number | null }, p: string): Promise<number> {
  const where =
    at.slot !== null
      ? { socketPath: path.join(home, "run", slotSocketName(at.slot)) }
      : { host: "127.0.0.1", port: at.port as number };
  return new Promise((resolve, reject) => {
    http
      .get({ ...where, path: p, agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
      .on("error", reject);
  });
}

beforeAll(() => {
  // Outside /tmp: the sandbox's private /tmp would hide a home there for the wrong reason.
  root = mkdtempSync(path.join("/var/tmp", "pc-sup-"));
  ownerHome = path.join(root, "owner");
  home = path.join(ownerHome, ".personalclaw");
  mkdirSync(path.join(home, "state"), { recursive: true });
  mkdirSync(path.join(ownerHome, ".ssh"), { recursive: true });
  writeFileSync(path.join(home, ".local_secret"), "local-secret-value");
  writeFileSync(path.join(ownerHome, ".ssh", "id_rsa"), "private key");
});

afterEach(async () => {
  await Promise.all(supervisors.splice(0).map((s) => s.stopAll()));
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("BackendSupervisor: start, stop and the watchdog", () => {
  it("starts a sandboxed backend that becomes healthy, with its secret written 0600 and its pid recorded", async () => {
    const { sup } = makeSupervisor();
    const spec = makeApp("healthy.mjs");
    const started = await sup.start(spec);
    expect(started.ok).toBe(true);
    if (!started.ok) return;
    expect(started.secret).toMatch(/^[0-9a-f]{64}$/);
    expect(await sup.waitForHealth(spec.name)).toBe(true);
    const status = sup.status(spec.name);
    expect(status).toMatchObject({
      running: true,
      healthy: true,
      port: null,
      slot: started.slot,
      pid: started.pid,
      restarts: 0,
      exit: null,
    });
    expect(started.slot).not.toBeNull();
    expect(await get(started, "/health")).toBe(200);

    const secretFile = path.join(spec.appDir, ".app_secret");
    expect(readFileSync(secretFile, "utf8")).toBe(started.secret);
    expect(statSync(secretFile).mode & 0o777).toBe(0o600);

    const { records } = readRunRecords(home);
    const record = records.find((r) => r.name === spec.name);
    expect(record).toMatchObject({ pid: started.pid, pgid: started.pid, bridgePid: process.pid });
    expect(record?.sandboxPgid).toBeGreaterThan(1);
  });

  it("stop sends SIGTERM the sandboxed backend can handle, and removes its run record", async () => {
    const { sup } = makeSupervisor();
    const spec = makeApp("healthy.mjs");
    await sup.start(spec);
    expect(await sup.waitForHealth(spec.name)).toBe(true);
    const stopped = await sup.stop(spec.name);
    expect(stopped).toMatchObject({ ok: true, wasRunning: true, killed: false });
    expect(stopped.exit?.code).toBe(0);
    // Asked for: the owner reads its exit as a stop, not a crash.
    expect(stopped.exit?.requested).toBe(true);
    const status = sup.status(spec.name);
    expect(status).toMatchObject({ running: false, healthy: false, reason: "stopped" });
    expect(status?.lastLines).toContain("got SIGTERM, closing");
    expect(readRunRecords(home).records.some((r) => r.name === spec.name)).toBe(false);
  });

  it("stop kills a backend that ignores SIGTERM once the grace runs out", async () => {
    const { sup } = makeSupervisor({ stopGraceMs: 400 });
    const spec = makeApp("healthy.mjs", { args: ["--ignore-sigterm"] });
    await sup.start(spec);
    expect(await sup.waitForHealth(spec.name)).toBe(true);
    const began = Date.now();
    const stopped = await sup.stop(spec.name);
    expect(stopped.killed).toBe(true);
    expect(Date.now() - began).toBeLessThan(3_000);
    expect(sup.status(spec.name)?.running).toBe(false);
    expect(sup.status(spec.name)?.lastLines).toContain("got SIGTERM, ignoring it");
  });

  it("a backend killed with SIGKILL is restarted by the watchdog and counted", async () => {
    const { sup } = makeSupervisor();
    const spec = makeApp("healthy.mjs");
    const started = await sup.start(spec);
    expect(await sup.waitForHealth(spec.name)).toBe(true);
    const firstPid = sup.status(spec.name)?.pid as number;
    process.kill(firstPid, "SIGKILL");
    await until("restarted and healthy", () => {
      const s = sup.status(spec.name);
      return !!s && s.restarts === 1 && s.healthy && s.pid !== firstPid;
    });
    const status = sup.status(spec.name) as SupervisedBackendStatus;
    expect(status.exit?.signal ?? String(status.exit?.code)).toBeTruthy();
    // Nobody asked for this one: it is no stop on request.
    expect(status.exit?.requested).toBeUndefined();
    expect(await get(status, "/health")).toBe(200);
    // The secret survives a watchdog restart, so the gateway's copy stays valid.
    expect(started.ok && readFileSync(path.join(spec.appDir, ".app_secret"), "utf8")).toBe(
      started.ok && started.secret,
    );
  });

  it("a backend that always exits stays down after three failed starts, showing its last lines and exit", async () => {
    const { sup } = makeSupervisor();
    const spec = makeApp("always-exits.mjs");
    expect((await sup.start(spec)).ok).toBe(true);
    await until("gave up", () => sup.status(spec.name)?.reason?.startsWith("stays down") ?? false);
    await sleep(1_500); // longer than the watchdog bound: nothing restarts it
    const status = sup.status(spec.name) as SupervisedBackendStatus;
    expect(status.running).toBe(false);
    expect(status.restarts).toBe(2);
    expect(status.exit?.code).toBe(1);
    expect(status.reason).toContain("3 starts in a row");
    expect(status.reason).toContain("exited with code 1");
    expect(status.lastLines).toEqual(["starting up", "fatal: config.toml is missing"]);
  });

  it("a held backend is not restarted, and is restarted once released", async () => {
    const { sup } = makeSupervisor();
    const spec = makeApp("healthy.mjs");
    await sup.start(spec);
    expect(await sup.waitForHealth(spec.name)).toBe(true);
    sup.hold(spec.name);
    process.kill(sup.status(spec.name)?.pid as number, "SIGKILL");
    await until("exit seen", () => sup.status(spec.name)?.running === false);
    await sleep(1_500);
    expect(sup.status(spec.name)).toMatchObject({ running: false, restarts: 0, held: true });
    expect(sup.status(spec.name)?.reason).toContain("held");
    sup.release(spec.name);
    await until("restarted after release", () => sup.status(spec.name)?.healthy === true);
    expect(sup.status(spec.name)?.restarts).toBe(1);
  });
});

describe("BackendSupervisor: health", () => {
  it("health is a standing observation: misses demote, the next success promotes", async () => {
    const { sup } = makeSupervisor();
    const spec = makeApp("healthy.mjs");
    const started = await sup.start(spec);
    if (!started.ok) throw new Error(started.reason);
    expect(await sup.waitForHealth(spec.name)).toBe(true);
    await get(started, "/sicken");
    await until("demoted", () => sup.status(spec.name)?.healthy === false, 5_000);
    expect(sup.status(spec.name)).toMatchObject({
      running: true,
      reason: expect.stringMatching(
        /^missed 3 health checks in a row; last it (answered|could not be reached|gave no whole answer)/,
      ),
    });
    await get(started, "/heal");
    await until("promoted", () => sup.status(spec.name)?.healthy === true, 5_000);
  });

  it("a backend's own startTimeoutSeconds replaces the supervisor's start timeout, and the reason names it", async () => {
    // The supervisor gives a start 8 s; this backend's manifest gives it 1 s, and its health path answers 404.
    const { sup } = makeSupervisor();
    const spec = makeApp("healthy.mjs");
    spec.backend.healthCheck = "/not-here";
    spec.backend.startTimeoutSeconds = 1;
    const started = Date.now();
    expect((await sup.start(spec)).ok).toBe(true);
    await until("start timeout reported", () => (sup.status(spec.name)?.reason ?? "").includes("within"), 6_000);
    expect(Date.now() - started).toBeLessThan(6_000);
    expect(sup.status(spec.name)).toMatchObject({
      running: true,
      healthy: false,
      reason: "did not answer GET /not-here with 2xx within 1 s; last it answered 404: ok",
    });
  });

  it("a healthCheck outside the allowed characters is never probed and the backend stays unhealthy", async () => {
    const { sup, logs } = makeSupervisor();
    const spec = makeApp("healthy.mjs");
    spec.backend.healthCheck = "/health?x=1";
    await sup.start(spec);
    await sleep(600);
    expect(sup.status(spec.name)).toMatchObject({ running: true, healthy: false });
    expect(logs.filter((l) => l.msg.includes("healthCheck")).length).toBe(1);
  });
});

describe("BackendSupervisor: what a backend sees and prints", () => {
  it("the backend sees only allowlisted names; a floor name declared in passthrough is still withheld", async () => {
    const { sup, logs } = makeSupervisor();
    const spec = makeApp("print-env.mjs", { hasStorage: false });
    await sup.start(spec);
    expect(await sup.waitForHealth(spec.name)).toBe(true);
    const envLine = sup.status(spec.name)?.lastLines.find((l) => l.startsWith("ENV_NAMES ")) ?? "";
    const names = envLine.slice("ENV_NAMES ".length).split(",");
    // PWD is bwrap's own, naming the --chdir folder (the app's); HOME and TMPDIR are the private /tmp.
    expect(names.sort()).toEqual(
      [
        "DEMO_API_TOKEN",
        "HOME",
        "LANG",
        "PATH",
        "PERSONALCLAW_APP_NAME",
        "PERSONALCLAW_APP_SECRET",
        "PERSONALCLAW_HOME",
        "PORT",
        "PWD",
        "TMPDIR",
        "NODE_OPTIONS",
      ].sort(),
    );
    const debug = logs
      .filter((l) => l.level === "debug")
      .map((l) => l.msg)
      .join("\n");
    for (const withheld of ["AWS_SECRET_ACCESS_KEY", "SSH_AUTH_SOCK", "SLACK_BOT_TOKEN", "RANDOM_SETTING"])
      expect(debug).toContain(withheld);
    expect(debug).not.toContain(parentEnv.AWS_SECRET_ACCESS_KEY);
  });

  it("a supervised backend cannot read the home's secrets, another app's secret or the owner's keys", async () => {
    const { sup } = makeSupervisor();
    const other = makeApp("healthy.mjs");
    writeFileSync(path.join(other.appDir, ".app_secret"), "other app secret");
    const spec = makeApp("read-files.mjs");
    const targets = [
      path.join(home, ".local_secret"),
      path.join(home, "state"),
      path.join(other.appDir, ".app_secret"),
      path.join(ownerHome, ".ssh", "id_rsa"),
      path.join(spec.appDir, "read-files.mjs"),
    ];
    spec.backend.args = [...(spec.backend.args ?? []), "--read", ...targets];
    await sup.start(spec);
    await until("its report", () => sup.status(spec.name)?.lastLines.includes("DONE") ?? false);
    const lines = sup.status(spec.name)?.lastLines ?? [];
    for (const hidden of targets.slice(0, 4)) expect(lines).toContain(`READ ${hidden} ENOENT`);
    expect(lines).toContain(`READ ${path.join(spec.appDir, "read-files.mjs")} ok`);
  });

  it("a descriptor the bridge holds open does not reach the backend", async () => {
    const held = openSync(path.join(home, ".local_secret"), "r");
    try {
      const { sup } = makeSupervisor({ sandbox: { mode: "off" } });
      const spec = makeApp("print-env.mjs");
      await sup.start(spec);
      expect(await sup.waitForHealth(spec.name)).toBe(true);
      const fdLine = sup.status(spec.name)?.lastLines.find((l) => l.startsWith("FDS ")) ?? "";
      expect(fdLine).toMatch(/^FDS 0=\/dev\/null 1=\S+ /); // stdin closed to /dev/null, stdout/stderr are the relay's pipes
      expect(fdLine).not.toContain(".local_secret");
    } finally {
      closeSync(held);
    }
  });

  it("the relayed log masks the secret, passed-through values and Bearer tokens, and escapes ANSI", async () => {
    const { sup, logs } = makeSupervisor();
    const spec = makeApp("print-env.mjs");
    const started = await sup.start(spec);
    if (!started.ok) throw new Error(started.reason);
    expect(await sup.waitForHealth(spec.name)).toBe(true);
    await until("READY relayed", () => logs.some((l) => l.msg.endsWith(": READY")));
    const relayed = logs.filter((l) => l.msg.startsWith(`app ${spec.name} backend (pid ${started.pid}): `));
    const text = relayed.map((l) => l.msg).join("\n");
    expect(text).toContain("my secret is ***");
    expect(text).toContain("token from env: ***");
    expect(text).toContain("Authorization: Bearer ***");
    expect(text).not.toContain(started.secret);
    expect(text).not.toContain(parentEnv.DEMO_API_TOKEN);
    expect(text).not.toContain("\u001b");
    const stderrLine = relayed.find((l) => l.msg.includes("red alert"));
    // A stderr line that names no level is info: stderr alone does not make it a warning.
    expect(stderrLine).toMatchObject({ level: "info" });
    expect(stderrLine?.msg).toContain("\\x1b[31mred alert\\x1b[0m and a bell \\x07");
    expect(relayed.find((l) => l.msg.endsWith(": READY"))?.level).toBe("info");
  });

  it("a backend printing 10 000 lines is rate-limited with a dropped note and still answers health", async () => {
    const { sup, logs } = makeSupervisor();
    const spec = makeApp("chatty.mjs");
    await sup.start(spec);
    expect(await sup.waitForHealth(spec.name, 15_000)).toBe(true);
    // Under load the pipe may still hold lines when health answers: wait until the relay has read them all.
    for (let i = 0; i < 100 && !sup.status(spec.name)?.lastLines.includes("flood done"); i++)
      await new Promise((r) => setTimeout(r, 100));
    const fromChild = logs.filter((l) => l.msg.startsWith(`app ${spec.name} backend (pid`));
    expect(fromChild.length).toBeGreaterThanOrEqual(200);
    expect(fromChild.length).toBeLessThan(260);
    await sup.stop(spec.name);
    // The drops are noted as they happen (a flood read over more than a second gets more than one note).
    const notes = logs.filter((l) => /line\(s\) dropped by the log rate limit/.test(l.msg));
    expect(notes.length).toBeGreaterThan(0);
    expect(notes.every((n) => n.level === "warning")).toBe(true);
    expect(
      notes.reduce((sum, n) => sum + Number(/: (\d+) line\(s\) dropped/.exec(n.msg)?.[1] ?? 0), 0),
    ).toBeGreaterThan(9_000);
    expect(sup.status(spec.name)?.lastLines).toContain("flood done");
  });
});

describe("BackendSupervisor: refused starts, socket slots and stopping every backend", () => {
  it("with bwrap missing from PATH a sandboxed start is refused with sandbox_unavailable and nothing is written", async () => {
    const bin = path.join(root, "bin-without-bwrap");
    mkdirSync(bin, { recursive: true });
    if (!existsSync(path.join(bin, "node"))) symlinkSync(node, path.join(bin, "node"));
    const { sup } = makeSupervisor({ parentEnv: { PATH: bin, HOME: ownerHome } });
    const spec = makeApp("healthy.mjs");
    const refused = await sup.start(spec);
    expect(refused).toMatchObject({ ok: false, code: "sandbox_unavailable" });
    expect(!refused.ok && refused.reason).toContain("apt-get install bubblewrap");
    expect(existsSync(path.join(spec.appDir, ".app_secret"))).toBe(false);
    expect(sup.status(spec.name)).toBeNull();

    // The owner's explicit opt-out runs it unsandboxed.
    const { sup: off } = makeSupervisor({ parentEnv: { PATH: bin, HOME: ownerHome }, sandbox: { mode: "off" } });
    expect((await off.start(spec)).ok).toBe(true);
    expect(await off.waitForHealth(spec.name)).toBe(true);
  });

  it("a backend whose .app_secret cannot be written is not started (fail closed)", async () => {
    const { sup } = makeSupervisor();
    const spec = makeApp("healthy.mjs");
    mkdirSync(path.join(spec.appDir, ".app_secret", "in-the-way"), { recursive: true });
    const refused = await sup.start(spec);
    expect(refused).toMatchObject({ ok: false, code: "app_secret_unwritable" });
    expect(sup.status(spec.name)).toMatchObject({ running: false, pid: null });
  });

  it("a second start of a running backend is refused", async () => {
    const { sup } = makeSupervisor();
    const spec = makeApp("healthy.mjs");
    expect((await sup.start(spec)).ok).toBe(true);
    expect(await sup.start(spec)).toMatchObject({ ok: false, code: "backend_already_running" });
  });

  it("backends started at once each get a socket slot of their own", async () => {
    // A gateway start starts every enabled app at once; a slot chosen but not yet claimed was
    // taken twice, and one app's requests reached the other's backend.
    const { sup } = makeSupervisor();
    const specs = [makeApp("healthy.mjs"), makeApp("healthy.mjs"), makeApp("healthy.mjs")];
    const started = await Promise.all(specs.map((spec) => sup.start(spec)));
    const slots = started.map((s) => (s.ok ? s.slot : null));
    expect(slots.every((slot) => slot !== null)).toBe(true);
    expect(new Set(slots).size).toBe(specs.length);
    for (const spec of specs) expect(await sup.waitForHealth(spec.name)).toBe(true);
  });

  it("stopAll stops every backend concurrently within its budget, stubborn ones included", async () => {
    const { sup } = makeSupervisor({ stopGraceMs: 5_000, stopAllBudgetMs: 3_500 });
    const a = makeApp("healthy.mjs");
    const b = makeApp("healthy.mjs", { args: ["--ignore-sigterm"] });
    const c = makeApp("healthy.mjs", { args: ["--ignore-sigterm"] });
    for (const spec of [a, b, c]) await sup.start(spec);
    for (const spec of [a, b, c]) expect(await sup.waitForHealth(spec.name)).toBe(true);
    const began = Date.now();
    await sup.stopAll();
    expect(Date.now() - began).toBeLessThan(3_500);
    for (const spec of [a, b, c]) expect(sup.status(spec.name)?.running).toBe(false);
  });
});
