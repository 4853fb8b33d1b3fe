// The gateway survives its own faults (issue 13), each injected into a real gateway started
// by the real `personalclaw start`: a full disk, a stale pid record, a cut-and-rewritten
// security log, lost stores, a stopped backend, a dead half, a taken port.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import {
  closeSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  errorCode,
  makeHome,
  rawRequest,
  removeHome,
  repoRoot,
  runCli,
  startGateway,
  writeUnansweringGateway,
  type RunningGateway,
} from "./helpers/gateway";
import { install, waitForRow } from "./helpers/backends";
import { readProcStat } from "../host-bridge/supervisor/process-identity";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function isAlive(pid: number): boolean {
  const stat = readProcStat(pid);
  return stat !== null && stat.state !== "Z";
}

async function waitUntil(done: () => boolean | Promise<boolean>, timeoutMs: number, stepMs = 50): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await done()) return true;
    await sleep(stepMs);
  }
  return done();
}

function descendantsOf(root: number): number[] {
  const all = readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p))
    .map(Number);
  const found: number[] = [];
  let frontier = [root];
  while (frontier.length > 0) {
    const next = all.filter((p) => frontier.includes(readProcStat(p)?.ppid ?? -1));
    found.push(...next);
    frontier = next;
  }
  return found;
}

function gatewayFile(home: string): { pid: number; workerdPid: number; port: number } {
  return JSON.parse(readFileSync(join(home, "gateway.json"), "utf8"));
}

/** A call with the home's internal credential, as the CLI makes one. */
function internalCall(gw: RunningGateway, method: string, path: string, body?: unknown) {
  const secret = readFileSync(join(gw.home, ".local_secret"), "utf8").trim();
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return rawRequest(gw.port, {
    method,
    path,
    headers: {
      Host: `127.0.0.1:${gw.port}`,
      "X-Internal-Secret": secret,
      "X-PersonalClaw-Work": "cli:faults-test",
      ...(payload === undefined ? {} : { "Content-Type": "application/json" }),
    },
    body: payload,
  });
}

function appendRow(gw: RunningGateway, subject: string) {
  return internalCall(gw, "POST", "/api/internal/sel/append", {
    kind: "fault_test_row",
    principal: "cli",
    outcome: "info",
    subject,
    detail: { filler: "x".repeat(400) },
  });
}

async function verify(gw: RunningGateway): Promise<{ ok: boolean; reason?: string; first_bad_seq?: number }> {
  const response = await gw.fetch("/api/security/events/verify");
  expect(response.status).toBe(200);
  return (await response.json()) as { ok: boolean; reason?: string };
}

async function eventsOfKind(
  gw: RunningGateway,
  kind: string,
): Promise<Array<{ kind: string; detail: Record<string, unknown> }>> {
  const response = await gw.fetch(`/api/security/events?kind=${kind}`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { events: Array<{ kind: string; detail: Record<string, unknown> }> }).events;
}

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
  // A file's last page has room of its own: top up gateway.log too, with empty lines.
  const log = join(dir, "home", "logs", "gateway.log");
  if (existsSync(log)) {
    const logFd = openSync(log, "a");
    try {
      for (;;) writeSync(logFd, "\n");
    } catch {
      // Full.
    }
    closeSync(logFd);
  }
  return filler;
}

describe("a full disk is an error, not a crash", () => {
  const mount = mkdtempSync(join(tmpdir(), "pc-full-"));
  let gw: RunningGateway;
  let filler = "";

  beforeAll(async () => {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=8m", "tmpfs", mount]);
    gw = await startGateway({ home: join(mount, "home") });
  });
  afterAll(async () => {
    await gw?.stop();
    execFileSync("umount", ["-l", mount]);
    rmSync(mount, { recursive: true, force: true });
  });

  it("answers 507 storage_full to writes while reads go on, logs to stderr, and recovers without a restart", async () => {
    expect((await appendRow(gw, "before")).status).toBe(200);
    filler = fillDisk(mount);
    // SQLite may still fit a few rows in pages it already has; the disk runs out within a few hundred.
    let refused: { status: number; body: string } | null = null;
    for (let i = 0; i < 400 && refused === null; i++) {
      const answer = await appendRow(gw, `while full ${i}`);
      if (answer.status !== 200) refused = answer;
    }
    expect(refused?.status).toBe(507);
    expect(JSON.parse(refused!.body).error.code).toBe("storage_full");
    expect(isAlive(gw.pid)).toBe(true);
    expect(isAlive(gatewayFile(gw.home).workerdPid)).toBe(true);
    // Reads keep working.
    const status = await gw.fetch("/api/status");
    expect(status.status, await status.clone().text()).toBe(200);
    const sessions = await gw.fetch("/api/auth/sessions");
    expect(sessions.status, await sessions.clone().text()).toBe(200);
    // An install cannot stage its copy: 507 storage_full, and nothing is left half-copied.
    const quarantine = join(gw.home, "apps", ".quarantine");
    const before = readdirSync(quarantine).length;
    const installing = await gw.fetch("/api/apps", {
      method: "POST",
      headers: { "content-type": "application/json", origin: gw.base },
      body: JSON.stringify({ source: join(repoRoot, "apps", "fixtures", "node-notes") }),
    });
    expect(installing.status).toBe(507);
    expect(await errorCode(installing)).toBe("storage_full");
    expect(readdirSync(quarantine).length).toBe(before);
    expect(existsSync(join(gw.home, "apps", "node-notes"))).toBe(false);
    // The bridge's log line about it could not reach gateway.log: it went to stderr instead.
    await waitUntil(() => gw.stderr().includes("gateway.log cannot be written"), 5_000);
    expect(gw.stderr()).toContain("gateway.log cannot be written");
    expect(isAlive(gw.pid)).toBe(true);

    rmSync(filler);
    const recovered = await waitUntil(async () => (await appendRow(gw, "after")).status === 200, 10_000, 250);
    expect(recovered).toBe(true);
    expect((await verify(gw)).ok).toBe(true);
    await install(gw.home, join(repoRoot, "apps", "fixtures", "node-notes"));
    // gateway.log takes lines again once its retry interval has passed.
    const logged = await waitUntil(
      () => readFileSync(join(gw.home, "logs", "gateway.log"), "utf8").includes("gateway.log is writable again"),
      8_000,
      250,
    );
    expect(logged).toBe(true);
  });

  it("a start on a full disk says so and exits", async () => {
    filler = fillDisk(mount);
    const result = await runCli(["start", "--port", "0", "--home", join(mount, "other-home")]);
    rmSync(filler);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/disk holding .* is full \((ENOSPC|EDQUOT)\)/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});

describe("pid files prove identity", () => {
  let sleeper: ChildProcess;
  const home = makeHome("pc-stale-");
  beforeAll(() => {
    sleeper = spawn("sleep", ["120"], { stdio: "ignore" });
  });
  afterAll(() => {
    sleeper.kill("SIGKILL");
    removeHome(home);
  });

  it("stop and start leave a live process that merely holds a recorded pid alone", async () => {
    const pid = sleeper.pid!;
    const startTime = readProcStat(pid)!.startTime;
    mkdirSync(home, { recursive: true });
    // The sleep's own start time but not the executable start recorded; workerd with a wrong start time.
    const stale = {
      pid,
      pidStartTime: startTime,
      pidExe: process.execPath,
      port: 1,
      url: "http://127.0.0.1:1/",
      bridgePort: 2,
      startedAt: "2020-01-01T00:00:00.000Z",
      workerdPid: pid,
      workerdStartTime: "1",
      workerdExe: "/usr/bin/workerd",
    };
    writeFileSync(join(home, "gateway.json"), JSON.stringify(stale));
    const stopped = await runCli(["stop", "--home", home]);
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toContain("stale gateway.json");
    expect(isAlive(pid)).toBe(true);

    writeFileSync(
      join(home, "gateway.json"),
      JSON.stringify({
        ...stale,
        pidExe: null,
        pidStartTime: "1",
        workerdStartTime: startTime,
        workerdExe: process.execPath,
      }),
    );
    const gw = await startGateway({ home });
    try {
      expect(isAlive(pid)).toBe(true);
      expect(gatewayFile(home).pid).toBe(gw.pid);
      expect((await gw.fetch("/api/status")).status).toBe(200);
    } finally {
      await gw.stop();
    }
    expect(isAlive(pid)).toBe(true);
  });
});

describe("the security-log anchor only moves forward", () => {
  const home = makeHome("pc-anchor-");
  afterAll(() => removeHome(home));

  it("rows cut off the end and written over keep verify failing, however many rows follow and across starts", async () => {
    let gw = await startGateway({ home });
    for (let i = 0; i < 5; i++) expect((await appendRow(gw, `row ${i}`)).status).toBe(200);
    await gw.stop();
    const anchored = JSON.parse(readFileSync(join(home, "sel_anchor.json"), "utf8")) as { seq: number; mac: string };
    const dir = join(home, "state", "personalclaw-security-log");
    const file = readdirSync(dir).find((f) => f.endsWith(".sqlite"))!;
    const db = new Database(join(dir, file));
    db.prepare("DELETE FROM events WHERE seq > ?").run(anchored.seq - 4);
    db.close();

    gw = await startGateway({ home });
    for (let i = 0; i < 20; i++) expect((await appendRow(gw, `after the cut ${i}`)).status).toBe(200);
    await sleep(2_500); // at least one anchor tick
    const result = await verify(gw);
    expect(result.ok).toBe(false);
    expect(result.reason).toBe("forked");
    expect(JSON.parse(readFileSync(join(home, "sel_anchor.json"), "utf8"))).toEqual(anchored);
    await gw.stop();

    gw = await startGateway({ home });
    try {
      expect((await verify(gw)).reason).toBe("forked");
    } finally {
      await gw.stop();
    }
  });

  it("an anchor set back (a log cut at its tail and re-anchored) is reported at start like a lost one, once", async () => {
    const fresh = makeHome("pc-anchor-back-");
    try {
      let gw = await startGateway({ home: fresh });
      await gw.stop();
      const anchor = JSON.parse(readFileSync(join(fresh, "sel_anchor.json"), "utf8")) as { seq: number; mac: string };
      expect(anchor.seq).toBeGreaterThan(2);
      writeFileSync(join(fresh, "sel_anchor.json"), JSON.stringify({ seq: anchor.seq - 2, mac: "0".repeat(64) }));
      gw = await startGateway({ home: fresh });
      try {
        expect(gw.stderr()).toContain("security-log anchor");
        expect(gw.stderr()).toContain("set back");
        expect(await eventsOfKind(gw, "sel_anchor_lost")).toHaveLength(1);
        const doctor = await runCli(["doctor", "--json", "--home", fresh]);
        expect(
          JSON.parse(doctor.stdout).rows.find((r: { name: string }) => r.name === "security-log anchor").status,
        ).toBe("fail");
        expect((await runCli(["security", "acknowledge", "--home", fresh])).code).toBe(0);
      } finally {
        await gw.stop();
      }
      // Reported once: the next start does not find it set back again.
      gw = await startGateway({ home: fresh });
      try {
        expect(gw.stderr()).not.toContain("set back");
        expect(await eventsOfKind(gw, "sel_anchor_lost")).toHaveLength(1);
      } finally {
        await gw.stop();
      }
    } finally {
      removeHome(fresh);
    }
  });

  it("a missing or garbled anchor is a warning at start, a row, and a doctor failure until acknowledged", async () => {
    const fresh = makeHome("pc-anchor-lost-");
    try {
      let gw = await startGateway({ home: fresh });
      await gw.stop();
      writeFileSync(join(fresh, "sel_anchor.json"), "{not json");
      gw = await startGateway({ home: fresh });
      try {
        expect(gw.stderr()).toContain("security-log anchor");
        expect(gw.stderr()).toContain("unreadable");
        const rows = await eventsOfKind(gw, "sel_anchor_lost");
        expect(rows).toHaveLength(1);
        const doctor = await runCli(["doctor", "--json", "--home", fresh]);
        const anchorRow = JSON.parse(doctor.stdout).rows.find(
          (r: { name: string }) => r.name === "security-log anchor",
        );
        expect(anchorRow.status).toBe("fail");
        expect(doctor.code).toBe(1);

        const ack = await runCli(["security", "acknowledge", "--home", fresh]);
        expect(ack.code).toBe(0);
        expect(await eventsOfKind(gw, "sel_anchor_loss_acknowledged")).toHaveLength(1);
        const after = await runCli(["doctor", "--json", "--home", fresh]);
        expect(
          JSON.parse(after.stdout).rows.find((r: { name: string }) => r.name === "security-log anchor").status,
        ).toBe("ok");
      } finally {
        await gw.stop();
      }
      // A missing file is the same loss.
      rmSync(join(fresh, "sel_anchor.json"));
      gw = await startGateway({ home: fresh });
      try {
        expect(gw.stderr()).toContain("is missing");
        expect(await eventsOfKind(gw, "sel_anchor_lost")).toHaveLength(2);
      } finally {
        await gw.stop();
      }
    } finally {
      removeHome(fresh);
    }
  });
});

describe("lost state is noticed", () => {
  const stores = ["personalclaw-session-store", "personalclaw-app-registry", "personalclaw-security-log"];

  it.each(stores)(
    "a start that finds the %s store removed refuses, naming it; --accept-state-loss continues and writes a row",
    async (store) => {
      const home = makeHome("pc-lost-");
      try {
        let gw = await startGateway({ home });
        await gw.stop();
        expect(existsSync(join(home, "state_manifest.json"))).toBe(true);
        const dir = join(home, "state", store);
        const removed = readdirSync(dir).filter((f) => f.endsWith(".sqlite"));
        expect(removed.length).toBeGreaterThan(0);
        for (const f of readdirSync(dir)) rmSync(join(dir, f));

        const refused = await runCli(["start", "--port", "0", "--home", home, "--json-ready"]);
        expect(refused.code).toBe(1);
        expect(refused.stderr).toContain(join(home, "state", store, removed[0]));
        expect(refused.stderr).toContain("is missing");
        expect(refused.stderr).toContain("--accept-state-loss");
        expect(existsSync(join(home, "gateway.json"))).toBe(false);

        gw = await startGateway({ home, args: ["--accept-state-loss"] });
        try {
          const rows = await eventsOfKind(gw, "state_loss_accepted");
          expect(rows).toHaveLength(1);
          expect(JSON.stringify(rows[0].detail)).toContain(store);
        } finally {
          await gw.stop();
        }
        // Accepted once: the manifest now describes what is there.
        gw = await startGateway({ home });
        await gw.stop();
      } finally {
        removeHome(home);
      }
    },
  );
});

describe("bounded waits", () => {
  const home = makeHome("pc-hung-");
  let gw: RunningGateway;
  let stopped: number[] = [];
  beforeAll(async () => {
    gw = await startGateway({ home });
  });
  afterAll(async () => {
    for (const pid of stopped) {
      try {
        process.kill(pid, "SIGCONT");
      } catch {
        // gone
      }
    }
    await gw.stop();
    removeHome(home);
  });

  it("a SIGSTOPped backend answers 504 app_backend_timeout within the manifest's bound", async () => {
    const bundle = join(mkdtempSync(join(tmpdir(), "pc-hung-app-")), "hung-notes");
    cpSync(join(repoRoot, "apps", "fixtures", "node-notes"), bundle, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(bundle, "app.json"), "utf8"));
    manifest.name = "hung-notes";
    manifest.permissions.api = ["/api/apps/hung-notes/"];
    manifest.backend.responseTimeoutSeconds = 2;
    writeFileSync(join(bundle, "app.json"), JSON.stringify(manifest, null, 2));
    await install(home, bundle);
    const row = await waitForRow(gw, "hung-notes", (r) => r.healthy);
    expect(row?.healthy).toBe(true);
    expect((await gw.fetch("/apps/hung-notes/api/echo")).status).toBe(200);

    // Stop the backend and every process under it (the sandbox and the program in it).
    stopped = [row!.pid!, ...descendantsOf(row!.pid!)];
    for (const pid of stopped) process.kill(pid, "SIGSTOP");
    const started = Date.now();
    const answer = await gw.fetch("/apps/hung-notes/api/echo");
    const waited = Date.now() - started;
    expect(answer.status).toBe(504);
    expect(await errorCode(answer)).toBe("app_backend_timeout");
    expect(waited).toBeGreaterThanOrEqual(1_900);
    expect(waited).toBeLessThan(4_000);
    for (const pid of stopped) process.kill(pid, "SIGCONT");
  });
});

describe("the two halves live and die together", () => {
  it("workerd SIGKILLed is back within 5 s with the owner's session intact", async () => {
    const gw = await startGateway({});
    try {
      const before = gatewayFile(gw.home).workerdPid;
      process.kill(before, "SIGKILL");
      const started = Date.now();
      const back = await waitUntil(async () => {
        try {
          return (await gw.fetch("/api/auth/sessions")).status === 200;
        } catch {
          return false;
        }
      }, 5_000);
      expect(back).toBe(true);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(gatewayFile(gw.home).workerdPid).not.toBe(before);
      expect(isAlive(gatewayFile(gw.home).workerdPid)).toBe(true);
      await waitUntil(async () => (await eventsOfKind(gw, "workerd_restarted")).length === 1, 3_000);
      expect(await eventsOfKind(gw, "workerd_restarted")).toHaveLength(1);
    } finally {
      await gw.stop();
      removeHome(gw.home);
    }
  });

  it("the bridge SIGKILLed takes workerd with it within 5 s, and the CLI says nothing runs without a stack trace", async () => {
    const gw = await startGateway({});
    try {
      const workerd = gatewayFile(gw.home).workerdPid;
      expect(isAlive(workerd)).toBe(true);
      process.kill(gw.pid, "SIGKILL");
      expect(await waitUntil(() => !isAlive(workerd), 5_000)).toBe(true);
      const events = await runCli(["security", "events", "--home", gw.home]);
      expect(events.code).toBe(1);
      expect(events.stderr).toContain("No gateway is running");
      expect(events.stderr).not.toMatch(/\n\s+at /);
    } finally {
      await gw.stop();
      removeHome(gw.home);
    }
  });

  it("a CLI command whose gateway does not answer says so with the fix", async () => {
    const home = makeHome("pc-silent-");
    try {
      const closed = createServer();
      const port = await new Promise<number>((r) =>
        closed.listen(0, "127.0.0.1", () => r((closed.address() as { port: number }).port)),
      );
      await new Promise((r) => closed.close(r));
      // This test process stands in for a live gateway whose workerd is gone.
      writeUnansweringGateway(home, port);
      const result = await runCli(["security", "events", "--home", home]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("The gateway is not answering");
      // The fix names the command as it was run (node .../personalclaw.mjs here) and the home.
      expect(result.stderr).toMatch(new RegExp(`personalclaw(\\.mjs)? start --home ${home}`));
      expect(result.stderr).not.toMatch(/\n\s+at /);
    } finally {
      removeHome(home);
    }
  });

  it("a start whose port is taken stops before any request reaches the port's owner", async () => {
    let requests = 0;
    const owner: Server = createServer((socket) => {
      requests += 1;
      socket.destroy();
    });
    const port = await new Promise<number>((r) =>
      owner.listen(0, "127.0.0.1", () => r((owner.address() as { port: number }).port)),
    );
    const home = makeHome("pc-port-");
    try {
      const result = await runCli(["start", "--port", String(port), "--home", home]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`Port ${port} is in use by another program; use --port 0 or --port N`);
      await sleep(200);
      expect(requests).toBe(0);
      expect(existsSync(join(home, "gateway.json"))).toBe(false);
    } finally {
      await new Promise((r) => owner.close(r));
      removeHome(home);
    }
  });
});

describe("app folders without a record", () => {
  it("doctor lists a folder in apps/ that the registry does not know, with the fix", async () => {
    const gw = await startGateway({});
    try {
      mkdirSync(join(gw.home, "apps", "orphan-app"));
      writeFileSync(join(gw.home, "apps", "orphan-app", "app.json"), "{}");
      const doctor = await runCli(["doctor", "--json", "--home", gw.home]);
      const row = JSON.parse(doctor.stdout).rows.find((r: { name: string }) => r.name === "app folders");
      expect(row.status).toBe("fail");
      expect(row.message).toContain(join(gw.home, "apps", "orphan-app"));
      expect(row.message).toMatch(/personalclaw(\.mjs)? apps install <folder> --home /);
      expect(doctor.code).toBe(1);
    } finally {
      await gw.stop();
      removeHome(gw.home);
    }
  });
});
