// No app child holds host privilege, whoever runs the gateway: the real `personalclaw start`
// (as root, and as an owner who is not root), real installs, real bubblewrap. Each kind of
// child (a backend, an install hook, an installer, an MCP server under `mcp run`) runs
// test/fixtures/backend-apps/privilege-probe/probe.py, which tries what a child holding host
// privilege could do: write the kernel's settings (kernel.core_pattern runs a program as host
// root on the next crash), read the owner's session keyring, trace or read another process,
// push keystrokes into a terminal, make namespaces, keep a descriptor its starter leaked.
import { spawn } from "node:child_process";
import { chownSync, closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliPath, repoRoot, runCli, startGateway, type RunningGateway, type TestUser } from "./helpers/gateway";
import { waitForRow } from "./helpers/backends";
import { descendantPids } from "./helpers/process-tree";
import { mcpLineAgent } from "./helpers/mcp-line-agent";
import { sandboxAvailability } from "../host-bridge/sandbox/bubblewrap";
import { boundsAvailability, DEFAULT_LIMITS } from "../host-bridge/sandbox/bounds";
import { runConfined } from "../host-bridge/sandbox/run-confined";

const probeApp = join(repoRoot, "test", "fixtures", "backend-apps", "privilege-probe");

/** The calls the seccomp filter refuses, as probe.py names them. */
const REFUSED = [
  "keyctl",
  "add_key",
  "request_key",
  "ptrace",
  "process_vm_readv",
  "perf_event_open",
  "bpf",
  "userfaultfd",
  "ioctl:TIOCSTI",
  "personality:ADDR_NO_RANDOMIZE",
  "mount",
  "setns",
  "init_module",
  "unshare:CLONE_NEWUSER",
];

type Report = Record<string, unknown> & { uid: number; euid: number; fds: number[] };

/** What every child's report must say, whichever kind of child it is. */
function expectNoHostPrivilege(report: Report, kind: string): void {
  expect(report.uid, `${kind}: uid`).not.toBe(0);
  expect(report.euid, `${kind}: euid`).not.toBe(0);
  expect(report.cap_eff, `${kind}: capabilities`).toBe("0000000000000000");
  expect(report.seccomp, `${kind}: seccomp mode`).toBe("2");
  for (const setting of ["/proc/sys/kernel/core_pattern", "/proc/sys/vm/stat_interval", "/proc/sysrq-trigger"])
    expect(
      ["EROFS", "EACCES", "ENOENT"],
      `${kind}: write ${setting} answered ${String(report[`write:${setting}`])}`,
    ).toContain(report[`write:${setting}`]);
  for (const call of REFUSED) expect([call, report[call]], kind).toEqual([call, "EPERM"]);
}

/** Host uids of the processes below `root` whose program is `name` (read from the host's /proc, not the box's). */
function hostUidsOf(root: number, name: RegExp): number[] {
  const uids: number[] = [];
  for (const pid of descendantPids(root)) {
    try {
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      if (!name.test(/^Name:\s+(\S+)/m.exec(status)?.[1] ?? "")) continue;
      uids.push(...(/^Uid:\s+(.+)$/m.exec(status)?.[1] ?? "").split(/\s+/).map(Number));
    } catch {
      // gone meanwhile
    }
  }
  return uids;
}

const isRoot = process.getuid?.() === 0;
/** As root, both kinds of owner; as anyone else, that owner alone. */
const owners: Array<[string, TestUser | undefined]> = isRoot
  ? [
      ["root", undefined],
      ["an owner who is not root", { uid: 65534, gid: 65534 }],
    ]
  : [["this user", undefined]];

describe.each(owners)("with the gateway run by %s", (_who, user) => {
  let root: string;
  let ownerHome: string;
  let home: string;
  let gw: RunningGateway;
  const env = (): NodeJS.ProcessEnv => ({ HOME: ownerHome, ...(user ? { XDG_RUNTIME_DIR: "" } : {}) });

  beforeAll(async () => {
    root = mkdtempSync("/var/tmp/pc-privilege-");
    ownerHome = join(root, "owner");
    home = join(ownerHome, ".personalclaw");
    mkdirSync(home, { recursive: true });
    if (user) for (const folder of [root, ownerHome, home]) chownSync(folder, user.uid, user.gid);
    gw = await startGateway({ home, env: env(), ...(user ? { user } : {}) });
    const installed = await runCli(
      ["apps", "install", probeApp, "--yes", "--json", "--home", home],
      env(),
      60_000,
      cliPath,
      user,
    );
    expect(installed.code, installed.stdout + installed.stderr).toBe(0);
  });

  afterAll(async () => {
    await gw?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it("an install hook writes no kernel setting, reaches no keyring and runs filtered, as no host root", () => {
    const report = JSON.parse(
      readFileSync(join(home, "apps", "privilege-probe", "data", "hook.json"), "utf8"),
    ) as Report;
    expectNoHostPrivilege(report, "hook");
    // Nothing but its standard streams (3 is the probe's own listing of /proc/self/fd).
    expect(report.fds).toEqual([0, 1, 2, 3]);
  });

  it("a backend writes no kernel setting, reaches no keyring and runs filtered, as no host root", async () => {
    expect((await waitForRow(gw, "privilege-probe", (r) => r.healthy))?.healthy).toBe(true);
    const response = await gw.fetch("/apps/privilege-probe/api/probe");
    expect(response.status).toBe(200);
    expectNoHostPrivilege((await response.json()) as Report, "backend");
    // Seen from the host, not from inside the box: the backend's real, effective, saved and filesystem uids.
    const uids = hostUidsOf(gw.pid, /^python3/);
    expect(uids.length).toBeGreaterThan(0);
    expect(uids).not.toContain(0);
    if (user) expect(new Set(uids)).toEqual(new Set([user.uid]));
  });

  it("an MCP server under `mcp run` gets no descriptor its starter leaked, and the closing is said", async () => {
    // An agent that left the owner's SSH key open on descriptor 30 when it started the server.
    const key = join(root, "id_ed25519");
    writeFileSync(key, "-----BEGIN OPENSSH PRIVATE KEY----- not-a-real-key\n", { mode: 0o600 });
    if (user) chownSync(key, user.uid, user.gid);
    const leaked = openSync(key, "r");
    const stdio: Array<"pipe" | "ignore" | number> = ["pipe", "pipe", "pipe"];
    while (stdio.length < 30) stdio.push("ignore");
    stdio.push(leaked);
    const server = spawn(process.execPath, [cliPath, "mcp", "run", "privilege-probe", "probe", "--home", home], {
      env: { ...process.env, ...env() },
      stdio,
      ...(user ?? {}),
    });
    closeSync(leaked);
    let stderr = "";
    server.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    try {
      const report = (await mcpLineAgent(server).callJson("report")) as unknown as Report;
      expectNoHostPrivilege(report, "MCP server");
      expect(report.fds).toEqual([0, 1, 2, 3]);
      expect(stderr).toMatch(/descriptors (\d+, )*30\b.*closed/);
    } finally {
      server.stdin!.end();
      server.kill("SIGKILL");
    }
  });
});

describe("an installer child", () => {
  it("writes no kernel setting, reaches no keyring and runs filtered, as no host root", async () => {
    const root = mkdtempSync("/var/tmp/pc-installer-");
    try {
      const appDir = join(root, "home", "apps", "privilege-probe");
      mkdirSync(join(appDir, "data"), { recursive: true });
      mkdirSync(join(appDir, "venv"), { recursive: true });
      writeFileSync(join(appDir, "probe.py"), readFileSync(join(probeApp, "probe.py")));
      const sandbox = await sandboxAvailability(process.env.PATH);
      expect(sandbox.ok, sandbox.reason).toBe(true);
      const lines: string[] = [];
      const result = await runConfined(
        {
          kind: "installer",
          app: { name: "privilege-probe", appDir, dataDir: join(appDir, "data"), hasStorage: false },
          command: {
            file: "python3",
            args: [join(appDir, "probe.py"), "--write", join(appDir, "venv", "report.json")],
          },
          cwd: "/tmp",
          writable: [join(appDir, "venv")],
          timeoutMs: 30_000,
          tag: "app privilege-probe installer",
        },
        {
          home: join(root, "home"),
          ownerHome: root,
          sandboxMode: "on",
          sandbox,
          bounds: boundsAvailability(process.env.PATH),
          limits: DEFAULT_LIMITS,
          parentEnv: { PATH: process.env.PATH },
          passthrough: [],
          log: (line) => lines.push(line),
        },
      );
      expect(result.ok, `${JSON.stringify(result)} ${lines.join("\n")}`).toBe(true);
      const report = JSON.parse(readFileSync(join(appDir, "venv", "report.json"), "utf8")) as Report;
      expectNoHostPrivilege(report, "installer");
      expect(report.fds).toEqual([0, 1, 2, 3]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
