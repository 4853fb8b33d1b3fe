// App backends end to end (BACK-*, SBX-*): the real `personalclaw start`, real installs through
// the CLI, real bubblewrap and real child processes. The unit suites beside the supervisor and
// the sandbox prove the parts; this proves what an owner sees through the gateway.
//
// Homes live under /var/tmp, not /tmp: the sandbox gives every backend a private /tmp, which
// would hide planted files there and make every "cannot read" verdict pass for the wrong reason.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot, startGateway, type RunningGateway } from "./helpers/gateway";
import { backendOf, getFromBackend, install, waitForRow } from "./helpers/backends";
import type { BackendStatus } from "../kernel/contracts/app-record";
import { plantCredentialStores } from "./fixtures/hostile/credential-stores";

const fixtureApps = join(repoRoot, "test", "fixtures", "backend-apps");
const nodeNotes = join(repoRoot, "apps", "fixtures", "node-notes");

async function waitUntil(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return check();
}

/** /proc/<pid>/stat fields after the command name: [state, ppid, ...]; null when there is no such process. */
function procStat(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

function isAlive(pid: number): boolean {
  const stat = procStat(pid);
  return stat !== null && stat[0] !== "Z";
}

async function post(gw: RunningGateway, path: string): Promise<Response> {
  return gw.fetch(path, { method: "POST", body: "{}", headers: { "content-type": "application/json" } });
}

/** Asks the sandbox-probe backend, on its loopback port, what it can read from inside its sandbox. */
async function probe(home: string, row: BackendStatus, target: string): Promise<{ read: string; list: string }> {
  const response = await getFromBackend(home, row, `/probe?path=${encodeURIComponent(target)}`);
  expect(response.status).toBe(200);
  return JSON.parse(response.body) as { read: string; list: string };
}

/** Lines of gateway.log that a backend's relay wrote. */
function relayedLines(home: string, app: string): string[] {
  return readFileSync(join(home, "logs", "gateway.log"), "utf8")
    .split("\n")
    .filter((line) => line.includes(`app ${app} backend (pid `));
}

// Names a backend may receive (BACK-10 base names, the app's own variables) plus the one the
// operator passed through below.
const ALLOWED_ENV = new Set([
  "PATH",
  "HOME",
  "TMPDIR",
  "LANG",
  "LANGUAGE",
  "TZ",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "NODE_EXTRA_CA_CERTS",
  "REQUESTS_CA_BUNDLE",
  "CURL_CA_BUNDLE",
  "GIT_SSL_CAINFO",
  "GIT_SSL_CAPATH",
  "PYTHONPATH",
  "PYTHONPYCACHEPREFIX",
  "PERSONALCLAW_HOME",
  "PERSONALCLAW_WORKSPACE",
  "PERSONALCLAW_PORT",
  "PERSONALCLAW_GATEWAY_URL",
  "PORT",
  "PERSONALCLAW_APP_NAME",
  "PERSONALCLAW_APP_SECRET",
  "PERSONALCLAW_APP_DATA_DIR",
  "MY_TOOL_TOKEN",
  "PWD", // set by bwrap to its --chdir folder, the app's own (asserted below)
  "NODE_OPTIONS", // the launcher's preload that hands a Node backend its slot's socket
]);
const isAllowedEnvName = (name: string) =>
  ALLOWED_ENV.has(name) ||
  name.startsWith("XDG_") ||
  name.startsWith("LC_") ||
  /^(http|https|no|all|ftp)_proxy$/i.test(name);

describe("app backends under a running gateway", () => {
  let root: string;
  let ownerHome: string;
  let planted: string[];
  let home: string;
  let gw: RunningGateway;
  let sleeperPid: number | null = null;
  // The gateway's environment: HOME points at a temporary owner home, so planted credential
  // folders never touch the real one; two operator variables, one of them on the floor list.
  let gatewayEnv: NodeJS.ProcessEnv;

  beforeAll(async () => {
    root = mkdtempSync("/var/tmp/pc-backends-");
    ownerHome = join(root, "owner");
    home = join(ownerHome, ".personalclaw"); // nested inside the owner's home, as by default
    mkdirSync(home, { recursive: true });
    writeFileSync(
      join(home, "config.json"),
      JSON.stringify({ sandbox: { env_passthrough: ["AWS_SECRET_ACCESS_KEY", "MY_TOOL_TOKEN"] } }),
    );
    planted = plantCredentialStores(ownerHome);
    mkdirSync(join(root, "other-project"));
    writeFileSync(join(root, "other-project", ".env"), "OTHER_PROJECT_TOKEN=planted\n");
    gatewayEnv = {
      HOME: ownerHome,
      MY_TOOL_TOKEN: "my-tool-token-0123456789",
      AWS_SECRET_ACCESS_KEY: "aws-secret-planted-0123456789",
      GITHUB_TOKEN: "not-on-the-allowlist-0123456789",
      // One of the gateway's own settings: it configures the gateway, never a backend.
      PERSONALCLAW_HOOK_TIMEOUT_S: "60",
    };
    gw = await startGateway({ home, env: gatewayEnv });
    for (const folder of [
      nodeNotes,
      ...["sandbox-probe", "crash-loop", "leaky-logger", "log-flood"].map((app) => join(fixtureApps, app)),
    ]) {
      await install(home, folder, { HOME: ownerHome });
    }
  });

  afterAll(async () => {
    if (sleeperPid !== null && isAlive(sleeperPid)) process.kill(sleeperPid, "SIGKILL");
    await gw?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("the node-notes backend starts after install, answers its health check and its row shows running and healthy with a pid and port", async () => {
    const row = await waitForRow(gw, "node-notes", (r) => r.healthy);
    expect(row).toMatchObject({ running: true, healthy: true, restarts: 0 });
    expect(row!.pid).toBeGreaterThan(1);
    expect(isAlive(row!.pid!)).toBe(true);
    expect(row!.port).toBeNull(); // confined: no port on the host's loopback
    expect(row!.slot).toBeGreaterThanOrEqual(0);
    expect(Date.parse(row!.startedAt!)).not.toBeNaN();
    const health = await getFromBackend(home, row!, "/health");
    expect(health.status).toBe(200);
  });

  it("a backend killed with SIGKILL is back with a new pid, healthy, within 30 s and restarts counts it", async () => {
    const before = (await waitForRow(gw, "node-notes", (r) => r.healthy))!;
    process.kill(before.pid!, "SIGKILL");
    const after = await waitForRow(gw, "node-notes", (r) => r.healthy && r.pid !== before.pid, 30_000);
    expect(after).toMatchObject({ running: true, healthy: true, restarts: before.restarts + 1 });
    expect(after!.pid).not.toBe(before.pid);
    expect(isAlive(before.pid!)).toBe(false);
    expect(after!.exit?.signal).toBe("SIGKILL");
    expect((await getFromBackend(home, after!, "/health")).status).toBe(200);
  });

  it("a backend that always exits stays down after 3 tries, its last lines, exit and a reason on the row", async () => {
    const row = await waitForRow(gw, "crash-loop", (r) => !r.running && /stays down/.test(r.reason ?? ""), 20_000);
    expect(row).toMatchObject({ running: false, healthy: false, restarts: 2 });
    expect(row!.exit).toMatchObject({ code: 3, signal: null });
    expect(row!.lastLines).toContain("fatal: settings.toml is missing");
    expect(row!.reason).toContain("3 starts in a row");
    // And it stays down: no fourth start.
    await new Promise((r) => setTimeout(r, 2_500));
    expect(await backendOf(gw, "crash-loop")).toMatchObject({ running: false, restarts: 2 });
  });

  it("disable stops the backend and enable starts it again, each with its security-log row", async () => {
    const before = (await waitForRow(gw, "node-notes", (r) => r.healthy))!;
    expect((await post(gw, "/api/apps/node-notes/disable")).status).toBe(200);
    const disabled = await waitForRow(gw, "node-notes", (r) => !r.running, 10_000);
    expect(disabled).toMatchObject({ running: false, healthy: false });
    expect(await waitUntil(() => !isAlive(before.pid!), 5_000)).toBe(true);
    // Stopped on purpose, so the watchdog leaves it down.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await backendOf(gw, "node-notes")).toMatchObject({ running: false });

    expect((await post(gw, "/api/apps/node-notes/enable")).status).toBe(200);
    const enabled = await waitForRow(gw, "node-notes", (r) => r.healthy);
    expect(enabled).toMatchObject({ running: true, healthy: true });
    expect(enabled!.pid).not.toBe(before.pid);
    expect(isAlive(enabled!.pid!)).toBe(true);

    for (const kind of ["app_disabled", "app_enabled"]) {
      const response = await gw.fetch(`/api/security/events?kind=${kind}`);
      expect(response.status).toBe(200);
      const { events } = (await response.json()) as { events: Array<{ kind: string; subject: string }> };
      expect(
        events.some((e) => e.kind === kind && e.subject === "node-notes"),
        kind,
      ).toBe(true);
    }
  });

  it("inside the sandbox the backend can read nothing of the owner's home, the PersonalClaw home or another project", async () => {
    const row = (await waitForRow(gw, "sandbox-probe", (r) => r.healthy))!;
    expect(row.healthy).toBe(true);
    // Controls: the probe does read what it is allowed to, so a hidden verdict below means hidden.
    expect((await probe(home, row, join(home, "apps", "sandbox-probe", ".app_secret"))).read).toBe("ok");
    expect((await probe(home, row, join(home, "apps", "sandbox-probe", "server.mjs"))).read).toBe("ok");

    expect((await probe(home, row, join(home, ".local_secret"))).read).toBe("ENOENT");
    expect((await probe(home, row, join(home, "sel_hmac.key"))).read).toBe("ENOENT");
    expect((await probe(home, row, join(home, "state"))).list).toBe("ENOENT");
    expect((await probe(home, row, join(home, "apps", "node-notes", ".app_secret"))).read).toBe("ENOENT");
    for (const file of planted) expect((await probe(home, row, file)).read, file).toBe("ENOENT");
    expect((await probe(home, row, join(root, "other-project", ".env"))).read).toBe("ENOENT");
    expect((await probe(home, row, join(ownerHome, ".gnupg"))).list).toBe("ENOENT");
    expect(await probe(home, row, "/run/user")).toMatchObject({ list: "ENOENT" }); // /run holds only the launcher's folder
    expect((await probe(home, row, "/etc/shadow")).read).toBe("ENOENT");
  });

  it("the backend's environment holds only allowlisted names; a passthrough name arrives, a floor name does not", async () => {
    const row = (await waitForRow(gw, "sandbox-probe", (r) => r.healthy))!;
    const response = await getFromBackend(home, row, "/env");
    const { names, myToolToken, pwd } = JSON.parse(response.body) as {
      names: string[];
      myToolToken: string | null;
      pwd: string | null;
    };
    expect(names.filter((name) => !isAllowedEnvName(name))).toEqual([]);
    if (pwd !== null) expect(pwd).toBe(join(home, "apps", "sandbox-probe"));
    for (const name of [
      "PATH",
      "HOME",
      "PORT",
      "PERSONALCLAW_APP_NAME",
      "PERSONALCLAW_APP_SECRET",
      "PERSONALCLAW_HOME",
      "MY_TOOL_TOKEN",
    ])
      expect(names).toContain(name);
    expect(myToolToken).toBe(gatewayEnv.MY_TOOL_TOKEN);
    expect(names).not.toContain("AWS_SECRET_ACCESS_KEY");
    expect(names).not.toContain("GITHUB_TOKEN");
    expect(names).not.toContain("PERSONALCLAW_HOOK_TIMEOUT_S");
  });

  it("a backend's secret, a Bearer token and terminal escapes are masked and escaped in gateway.log and lastLines", async () => {
    const row = (await waitForRow(
      gw,
      "leaky-logger",
      (r) => r.healthy && r.lastLines.some((l) => l.includes("ready")),
    ))!;
    expect(row.healthy).toBe(true);
    const secret = readFileSync(join(home, "apps", "leaky-logger", ".app_secret"), "utf8").trim();
    expect(secret.length).toBeGreaterThanOrEqual(32);
    const whole = readFileSync(join(home, "logs", "gateway.log"), "utf8");
    expect(whole).not.toContain(secret);
    expect(whole).not.toContain("leakyTOKEN123");
    for (const [where, lines] of [
      ["gateway.log", relayedLines(home, "leaky-logger")],
      ["lastLines", row.lastLines],
    ] as const) {
      const text = lines.join("\n");
      expect(text, where).toContain("my secret is ***");
      expect(text, where).toContain("Bearer ***");
      expect(text, where).toContain("\\x1b[31mred alert\\x1b[0m\\x1b[2J and a bell \\x07");
      expect(text, where).not.toContain(secret);
      expect(text, where).not.toContain("leakyTOKEN123");
      expect(text, where).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
    }
  });

  it("a backend printing 10 000 lines in a burst is rate-limited with a dropped-lines note and still answers its health check", async () => {
    // Under load the pipe may still hold lines when health answers; the row's last lines are
    // reported again once they moved (at the next health probe).
    const row = await waitForRow(
      gw,
      "log-flood",
      (r) => r.healthy && r.lastLines.at(-1) === "log-flood: flood done",
      25_000,
    );
    expect(row).toMatchObject({ running: true, healthy: true });
    expect(row!.lastLines.at(-1)).toBe("log-flood: flood done");
    expect(
      await waitUntil(
        () => relayedLines(home, "log-flood").some((l) => /\d+ line\(s\) dropped by the log rate limit/.test(l)),
        5_000,
      ),
    ).toBe(true);
    const relayed = relayedLines(home, "log-flood").filter((l) => l.includes("log-flood line "));
    expect(relayed.length).toBeGreaterThan(0);
    expect(relayed.length).toBeLessThan(1_000);
    expect((await getFromBackend(home, row!, "/health")).status).toBe(200);
  });

  it("after a SIGKILL of the gateway, the next start on the same home leaves no backend or workerd of the old run alive and spares unrelated orphans", async () => {
    const old = (await waitForRow(gw, "node-notes", (r) => r.healthy))!;
    const record = JSON.parse(readFileSync(join(home, "run", "backends", "node-notes.json"), "utf8")) as {
      pid: number;
      sandboxPgid?: number;
    };
    const oldPids = [old.pid!, ...(record.sandboxPgid ? [record.sandboxPgid] : [])];
    const { workerdPid } = JSON.parse(readFileSync(join(home, "gateway.json"), "utf8")) as { workerdPid: number };
    for (const pid of [...oldPids, workerdPid]) expect(isAlive(pid), `pid ${pid}`).toBe(true);

    // An unrelated orphan: the sleep is re-parented to init once its shell exits.
    const shell = spawn("sh", ["-c", "sleep 300 >/dev/null 2>&1 & echo $!"], {
      detached: true,
      stdio: ["ignore", "pipe", "ignore"],
    });
    let out = "";
    shell.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    await new Promise((r) => shell.once("close", r));
    sleeperPid = Number(out.trim());
    expect(await waitUntil(() => procStat(sleeperPid!)?.[1] === "1", 2_000)).toBe(true);

    gw.process.kill("SIGKILL");
    await gw.stop(); // resolves on exit
    gw = await startGateway({ home, env: gatewayEnv });

    const fresh = await waitForRow(gw, "node-notes", (r) => r.healthy);
    expect(fresh).toMatchObject({ running: true, healthy: true });
    expect(oldPids).not.toContain(fresh!.pid);
    for (const pid of oldPids) expect(await waitUntil(() => !isAlive(pid), 5_000), `old backend pid ${pid}`).toBe(true);
    expect(isAlive(workerdPid), `old workerd pid ${workerdPid}`).toBe(false);
    expect(isAlive(sleeperPid)).toBe(true);
    expect((await gw.fetch("/api/status")).status).toBe(200);
    expect((JSON.parse(readFileSync(join(home, "gateway.json"), "utf8")) as { pid: number }).pid).toBe(gw.pid);
  });
});

describe("app backends without bubblewrap", () => {
  let root: string;
  let gw: RunningGateway;

  beforeAll(async () => {
    root = mkdtempSync("/var/tmp/pc-nobwrap-");
    const bin = join(root, "bin");
    mkdirSync(bin);
    symlinkSync(process.execPath, join(bin, "node")); // what the backend needs; bwrap is not here
    gw = await startGateway({ home: join(root, "home"), env: { PATH: bin } });
  });

  afterAll(async () => {
    await gw?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("the backend refuses to start: its row shows running false and sandbox_unavailable", async () => {
    await install(gw.home, nodeNotes);
    const row = await waitForRow(gw, "node-notes", (r) => (r.reason ?? "").includes("sandbox_unavailable"), 10_000);
    expect(row).toMatchObject({ running: false, healthy: false, pid: null });
    expect(row!.reason).toContain("sandbox_unavailable");
    expect(row!.reason).toContain("bubblewrap");
    const events = (await (await gw.fetch("/api/security/events?kind=backend_start_refused")).json()).events;
    expect(events[0]).toMatchObject({
      principal: "internal:bridge",
      outcome: "refused",
      subject: "node-notes",
      detail: { code: "sandbox_unavailable" },
    });
  });
});
