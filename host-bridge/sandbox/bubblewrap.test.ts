// Real bubblewrap, real files: what a sandboxed child can and cannot read or write.
import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sandboxAvailability, sandboxRefusal, wrapInSandbox, type SandboxAvailability, type WrapOptions } from "./bubblewrap.js";

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../test/fixtures/backends");
let root: string;
let home: string;
let ownerHome: string;
let appDir: string;
let dataDir: string;
let available: SandboxAvailability;

function run(file: string, args: string[], env: Record<string, string> = { PATH: "/usr/bin:/bin" }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

function wrapOpts(over: Partial<WrapOptions> = {}): WrapOptions {
  return {
    appDir,
    dataDir,
    writableData: true,
    home,
    ownerHome,
    level: "strict",
    network: true,
    bwrapPath: available.path,
    userNamespace: available.userNamespace,
    ...over,
  };
}

async function readInSandbox(paths: string[], over: Partial<WrapOptions> = {}): Promise<Record<string, string>> {
  const cmd = wrapInSandbox({ file: process.execPath, args: [path.join(appDir, "read-files.mjs"), "--read", ...paths], cwd: appDir }, wrapOpts(over));
  const result = await run(cmd.file, cmd.args);
  expect(result.stdout, result.stderr).toContain("DONE");
  const verdicts: Record<string, string> = {};
  for (const line of result.stdout.split("\n")) {
    const m = /^(READ|WRITE) (\S+) (\S+)$/.exec(line);
    if (m) verdicts[m[2] as string] = m[3] as string;
  }
  return verdicts;
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

async function eventually(check: () => Promise<boolean>, want: boolean, timeoutMs = 5000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let last = await check();
  while (last !== want && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    last = await check();
  }
  return last;
}

beforeAll(async () => {
  available = await sandboxAvailability(process.env.PATH);
  // Not under /tmp: the sandbox gives the child a private /tmp, which would hide everything there
  // and make every "hidden" verdict below pass for the wrong reason.
  root = mkdtempSync(path.join("/var/tmp", "pc-sbx-"));
  ownerHome = path.join(root, "owner");
  home = path.join(ownerHome, ".personalclaw"); // nested, as by default
  appDir = path.join(home, "apps", "notes");
  dataDir = path.join(appDir, "data");
  mkdirSync(dataDir, { recursive: true });
  mkdirSync(path.join(home, "apps", "other"), { recursive: true });
  mkdirSync(path.join(home, "state"), { recursive: true });
  copyFileSync(path.join(fixtures, "read-files.mjs"), path.join(appDir, "read-files.mjs"));
  writeFileSync(path.join(appDir, ".app_secret"), "own-secret");
  writeFileSync(path.join(home, ".local_secret"), "local-secret");
  writeFileSync(path.join(home, "state", "x"), "durable object state");
  writeFileSync(path.join(home, "apps", "other", ".app_secret"), "other-secret");
  for (const dir of [".ssh", ".gnupg", ".aws", ".config/gcloud"]) mkdirSync(path.join(ownerHome, dir), { recursive: true });
  writeFileSync(path.join(ownerHome, ".ssh", "id_rsa"), "-----BEGIN OPENSSH PRIVATE KEY-----");
  writeFileSync(path.join(ownerHome, ".gnupg", "secring.gpg"), "gpg");
  writeFileSync(path.join(ownerHome, ".aws", "credentials"), "[default]");
  writeFileSync(path.join(ownerHome, ".config", "gcloud", "credentials.db"), "gcloud");
  writeFileSync(path.join(ownerHome, ".npmrc"), "//registry.npmjs.org/:_authToken=npm_x");
  writeFileSync(path.join(ownerHome, "notes.txt"), "ordinary file");
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("sandboxAvailability", () => {
  it("finds bwrap on PATH and proves it can start a sandbox", () => {
    expect(available.ok, available.reason).toBe(true);
    expect(available.path).toMatch(/\/bwrap$/);
  });

  it("reports bwrap missing when PATH does not hold it, and a required sandbox is refused with the fix named", async () => {
    const missing = await sandboxAvailability(root);
    expect(missing.ok).toBe(false);
    const refusal = sandboxRefusal("on", missing);
    expect(refusal?.code).toBe("sandbox_unavailable");
    expect(refusal?.reason).toContain("apt-get install bubblewrap");
    expect(refusal?.reason).toContain('sandbox.mode = "off"');
    expect(sandboxRefusal("off", missing)).toBeNull();
  });
});

describe("wrapInSandbox", () => {
  it("hides the PersonalClaw home, other apps and the owner's credentials but shows the app's own folder", async () => {
    const verdicts = await readInSandbox([
      path.join(home, ".local_secret"),
      path.join(home, "state", "x"),
      path.join(home, "apps", "other", ".app_secret"),
      path.join(ownerHome, ".ssh", "id_rsa"),
      path.join(ownerHome, ".gnupg", "secring.gpg"),
      path.join(ownerHome, ".aws", "credentials"),
      path.join(ownerHome, ".config", "gcloud", "credentials.db"),
      path.join(ownerHome, ".npmrc"),
      path.join(appDir, ".app_secret"),
      path.join(ownerHome, "notes.txt"),
    ]);
    expect(verdicts[path.join(home, ".local_secret")]).toBe("ENOENT");
    expect(verdicts[path.join(home, "state", "x")]).toBe("ENOENT");
    expect(verdicts[path.join(home, "apps", "other", ".app_secret")]).toBe("ENOENT");
    expect(verdicts[path.join(ownerHome, ".ssh", "id_rsa")]).toBe("ENOENT");
    expect(verdicts[path.join(ownerHome, ".gnupg", "secring.gpg")]).toBe("ENOENT");
    expect(verdicts[path.join(ownerHome, ".aws", "credentials")]).toBe("ENOENT");
    expect(verdicts[path.join(ownerHome, ".config", "gcloud", "credentials.db")]).toBe("ENOENT");
    expect(verdicts[path.join(ownerHome, ".npmrc")]).toBe("ok"); // bound to /dev/null: readable, empty
    expect(verdicts[path.join(appDir, ".app_secret")]).toBe("ok");
    expect(verdicts[path.join(ownerHome, "notes.txt")]).toBe("ok"); // credential-hiding, not a jail
  });

  it("a credential file is read as empty", async () => {
    const cmd = wrapInSandbox({ file: "/bin/cat", args: [path.join(ownerHome, ".npmrc")], cwd: appDir }, wrapOpts());
    const result = await run(cmd.file, cmd.args);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("");
  });

  it("level standard hides gnupg and gcloud but leaves ssh and aws readable", async () => {
    const verdicts = await readInSandbox(
      [path.join(ownerHome, ".ssh", "id_rsa"), path.join(ownerHome, ".aws", "credentials"), path.join(ownerHome, ".gnupg", "secring.gpg"), path.join(ownerHome, ".config", "gcloud", "credentials.db")],
      { level: "standard" },
    );
    expect(verdicts[path.join(ownerHome, ".ssh", "id_rsa")]).toBe("ok");
    expect(verdicts[path.join(ownerHome, ".aws", "credentials")]).toBe("ok");
    expect(verdicts[path.join(ownerHome, ".gnupg", "secring.gpg")]).toBe("ENOENT");
    expect(verdicts[path.join(ownerHome, ".config", "gcloud", "credentials.db")]).toBe("ENOENT");
  });

  it("only data/ is writable, and only when the app has storage", async () => {
    const target = path.join(dataDir, "w.txt");
    const outside = path.join(appDir, "w.txt");
    const args = [path.join(appDir, "read-files.mjs"), "--write", target, outside, "/etc/pc-sandbox-test"];
    const writable = await run(...Object.values(wrapInSandbox({ file: process.execPath, args, cwd: appDir }, wrapOpts())) as [string, string[]]);
    expect(writable.stdout).toContain(`WRITE ${target} ok`);
    expect(writable.stdout).toContain(`WRITE ${outside} EROFS`);
    expect(writable.stdout).toContain("WRITE /etc/pc-sandbox-test EROFS");
    expect(readFileSync(target, "utf8")).toBe("written from the sandbox\n");

    rmSync(target);
    const readOnly = await run(...Object.values(wrapInSandbox({ file: process.execPath, args, cwd: appDir }, wrapOpts({ writableData: false }))) as [string, string[]]);
    expect(readOnly.stdout).toContain(`WRITE ${target} EROFS`);
  });

  it("the child has no capabilities and its own pid namespace", async () => {
    const cmd = wrapInSandbox({ file: "/bin/sh", args: ["-c", "grep CapEff /proc/self/status; ls /proc | grep -c '^[0-9]'"], cwd: appDir }, wrapOpts());
    const result = await run(cmd.file, cmd.args);
    expect(result.stdout).toContain("CapEff:\t0000000000000000");
    const pidCount = Number(result.stdout.trim().split("\n").at(-1));
    expect(pidCount).toBeLessThan(6); // bwrap's init, sh, grep/ls: not the host's processes
  });

  it("without network the child cannot reach a server on the host's loopback; with it, it can", async () => {
    const server = net.createServer((s) => {
      s.on("error", () => {});
      s.end("hi");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as net.AddressInfo).port;
    const probe = `require('net').connect(${port},'127.0.0.1').on('connect',()=>{console.log('CONNECTED');process.exit(0)}).on('error',e=>{console.log('ERR '+e.code);process.exit(0)})`;
    try {
      const off = wrapInSandbox({ file: process.execPath, args: ["-e", probe], cwd: appDir }, wrapOpts({ network: false }));
      expect((await run(off.file, off.args)).stdout).toContain("ERR ECONNREFUSED");
      const on = wrapInSandbox({ file: process.execPath, args: ["-e", probe], cwd: appDir }, wrapOpts({ network: true }));
      expect((await run(on.file, on.args)).stdout).toContain("CONNECTED");
    } finally {
      server.close();
    }
  });

  it("a sandboxed child dies when the process that started bwrap is killed", async () => {
    copyFileSync(path.join(fixtures, "healthy.mjs"), path.join(appDir, "healthy.mjs"));
    const port = await freePort();
    const cmd = wrapInSandbox({ file: process.execPath, args: [path.join(appDir, "healthy.mjs")], cwd: appDir }, wrapOpts());
    // A stand-in bridge: starts bwrap and then waits; we SIGKILL it, as a hard kill of the bridge would.
    const script = `require("child_process").spawn(${JSON.stringify(cmd.file)}, ${JSON.stringify(cmd.args)}, { stdio: "ignore", env: { PATH: "/usr/bin:/bin", PORT: "${port}" } }); setInterval(() => {}, 1000);`;
    const bridge = spawn(process.execPath, ["-e", script], { stdio: "ignore" });
    try {
      expect(await eventually(() => answers(port), true)).toBe(true);
      bridge.kill("SIGKILL");
      expect(await eventually(() => answers(port), false)).toBe(false);
    } finally {
      bridge.kill("SIGKILL");
    }
  });

  it("no environment value is put on bwrap's command line, which every local user can read", () => {
    const cmd = wrapInSandbox({ file: "node", args: ["server.js"], cwd: appDir }, wrapOpts());
    expect(cmd.args).not.toContain("--setenv");
    expect(cmd.args).toContain("--new-session");
    expect(cmd.args).toContain("--die-with-parent");
  });
});
