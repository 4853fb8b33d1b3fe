// Real bubblewrap, real files: what a sandboxed child can and cannot read or write.
import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tmpdir } from "node:os";
import {
  sandboxAvailability,
  sandboxRefusal,
  wrapInSandbox,
  type SandboxAvailability,
  type WrapOptions,
} from "./bubblewrap.js";
import { ETC_ENTRIES } from "./mount-plan.js";
import http from "node:http";
import { openSlotListener, SLOT_LISTEN_FD, withListener } from "../supervisor/slot-listener.js";
import {
  hostSideEnv,
  SANDBOX_ENV_FD,
  SANDBOX_SECCOMP_FD,
  sandboxEnvArgs,
  spawnChild,
} from "../supervisor/spawn-child.js";
import { seccompProgram } from "./seccomp-filter.js";
import { slotSocketName } from "../../kernel/contracts/backend-slots.js";
import { plantCredentialStores } from "../../test/fixtures/hostile/credential-stores.js";

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../test/fixtures/backends");
let root: string;
let home: string;
let ownerHome: string;
let appDir: string;
let dataDir: string;
let available: SandboxAvailability;
let planted: string[];

/** Runs a wrapInSandbox command as the bridge does: `env` reaches the child through bwrap's SANDBOX_ENV_FD. */
function run(
  file: string,
  args: string[],
  env: Record<string, string> = { PATH: "/usr/bin:/bin" },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawnChild({ file, args, cwd: "/" }, { env, stdio: ["ignore", "pipe", "pipe"], boxed: true });
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr?.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

function wrapOpts(over: Partial<WrapOptions> = {}): WrapOptions {
  return {
    appDir,
    writable: [dataDir],
    home,
    ownerHome,
    pathEnv: "/usr/bin:/bin",
    bwrapPath: available.path,
    userNamespace: available.userNamespace,
    childIdentity: available.childIdentity ?? null,
    ...over,
  };
}

async function readInSandbox(paths: string[], over: Partial<WrapOptions> = {}): Promise<Record<string, string>> {
  const cmd = wrapInSandbox(
    { file: process.execPath, args: [path.join(appDir, "read-files.mjs"), "--read", ...paths], cwd: appDir },
    wrapOpts(over),
  );
  const result = await run(cmd.file, cmd.args);
  expect(result.stdout, result.stderr).toContain("DONE");
  const verdicts: Record<string, string> = {};
  for (const line of result.stdout.split("\n")) {
    const m = /^(READ|WRITE) (.+) (\S+)$/.exec(line);
    if (m) verdicts[m[2] as string] = m[3] as string;
  }
  return verdicts;
}

/** What the child sees when it lists each folder (sorted names, or the error code). */
async function listInSandbox(
  folders: string[],
  over: Partial<WrapOptions> = {},
): Promise<Record<string, string[] | string>> {
  const script = `const fs=require("fs");const out={};for(const d of ${JSON.stringify(folders)}){try{out[d]=fs.readdirSync(d).sort()}catch(e){out[d]=e.code}}console.log(JSON.stringify(out))`;
  const cmd = wrapInSandbox({ file: "node", args: ["-e", script], cwd: appDir }, wrapOpts(over));
  const result = await run(cmd.file, cmd.args);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as Record<string, string[] | string>;
}

/** True when a backend answers GET /health 200 through the socket at `socketPath`. */
function answersAt(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get({ socketPath, path: "/health", agent: false, timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on("error", () => resolve(false));
    req.on("timeout", () => req.destroy());
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
  planted = plantCredentialStores(ownerHome);
  mkdirSync(path.join(root, "other-project"), { recursive: true });
  writeFileSync(path.join(root, "other-project", ".env"), "OTHER_PROJECT_TOKEN=x");
  // An interpreter installed under the owner's home, as nvm does: its bin/ and lib/ are shown, nothing else of the home.
  const nvm = path.join(ownerHome, ".nvm", "versions", "node", "v20.0.0");
  mkdirSync(path.join(nvm, "bin"), { recursive: true });
  mkdirSync(path.join(nvm, "lib", "node_modules"), { recursive: true });
  writeFileSync(
    path.join(nvm, "bin", "node"),
    '#!/bin/sh\necho interpreter-ran\nfor d in "$@"; do ls -A "$d" | tr "\\n" " "; echo; done\n',
    { mode: 0o755 },
  );
  writeFileSync(path.join(nvm, "lib", "node_modules", "marker"), "lib");
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
  it("shows nothing of the owner's home: every planted credential store, history and other project is absent", async () => {
    const targets = [...planted, path.join(root, "other-project", ".env")];
    const verdicts = await readInSandbox(targets);
    for (const target of targets) expect(verdicts[target], target).toBe("ENOENT");
  });

  it("hides the PersonalClaw home and other apps but shows the app's own folder", async () => {
    const verdicts = await readInSandbox([
      path.join(home, ".local_secret"),
      path.join(home, "state", "x"),
      path.join(home, "apps", "other", ".app_secret"),
      path.join(appDir, ".app_secret"),
    ]);
    expect(verdicts[path.join(home, ".local_secret")]).toBe("ENOENT");
    expect(verdicts[path.join(home, "state", "x")]).toBe("ENOENT");
    expect(verdicts[path.join(home, "apps", "other", ".app_secret")]).toBe("ENOENT");
    expect(verdicts[path.join(appDir, ".app_secret")]).toBe("ok");
  });

  it("lists exactly the mount plan: the root, /etc, the homes and the PersonalClaw home hold only what was bound", async () => {
    const seen = await listInSandbox([
      "/",
      "/etc",
      ownerHome,
      home,
      path.join(home, "apps"),
      "/tmp",
      "/run",
      "/home",
      "/var/tmp",
      root,
    ]);
    const rootEntries = seen["/"] as string[];
    for (const name of rootEntries)
      expect(
        ["bin", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "sbin", "tmp", "usr", "var"],
        `/${name}`,
      ).toContain(name);
    for (const name of seen["/etc"] as string[]) expect(ETC_ENTRIES as readonly string[]).toContain(name);
    expect(seen["/etc"]).not.toContain("shadow");
    expect(seen[ownerHome]).toEqual([".personalclaw"]); // only the path down to the app folder
    expect(seen[home]).toEqual(["apps"]);
    expect(seen[path.join(home, "apps")]).toEqual(["notes"]);
    expect(seen[root]).toEqual(["owner"]); // not other-project
    expect(seen["/tmp"]).toEqual([]);
    expect(seen["/run"]).toBe("ENOENT");
    expect(seen["/home"]).toBe("ENOENT");
  });

  it("a host UNIX socket in /tmp or /run is not reachable", async () => {
    const sockets = [path.join(tmpdir(), `pc-sbx-${process.pid}.sock`), `/run/pc-sbx-${process.pid}.sock`];
    const servers = await Promise.all(
      sockets.map(
        (socketPath) =>
          new Promise<net.Server>((resolve) => {
            const server = net.createServer((s) => s.end("hi"));
            server.listen(socketPath, () => resolve(server));
          }),
      ),
    );
    try {
      const probe = `const net=require("net");let n=0;for(const p of ${JSON.stringify(sockets)}){net.connect(p).on("connect",()=>{console.log("CONNECTED "+p);if(++n===2)process.exit(0)}).on("error",e=>{console.log("ERR "+e.code);if(++n===2)process.exit(0)})}`;
      const cmd = wrapInSandbox({ file: "node", args: ["-e", probe], cwd: appDir }, wrapOpts());
      const result = await run(cmd.file, cmd.args);
      expect(result.stdout).not.toContain("CONNECTED");
      expect(result.stdout.match(/ERR ENOENT/g)?.length).toBe(2);
    } finally {
      for (const server of servers) server.close();
    }
  });
});

describe("wrapInSandbox: interpreters and #! lines", () => {
  it("an interpreter under the owner's home gets its bin/ and lib/ shown, and nothing else of the home", async () => {
    const nvm = path.join(ownerHome, ".nvm", "versions", "node", "v20.0.0");
    const pathEnv = `${path.join(nvm, "bin")}:/usr/bin:/bin`;
    const cmd = wrapInSandbox(
      { file: "node", args: [ownerHome, nvm, path.join(ownerHome, ".ssh")], cwd: appDir },
      wrapOpts({ pathEnv }),
    );
    expect(cmd.args).toContain(path.join(nvm, "bin"));
    expect(cmd.args).toContain(path.join(nvm, "lib"));
    // The home itself is only an empty folder on the way to the prefix: nothing binds it.
    const boxArgs = cmd.args.slice(0, cmd.args.indexOf("--"));
    const boundSources = boxArgs.flatMap((arg, i) => (/^--(ro-)?bind(-try)?$/.test(arg) ? [boxArgs[i + 1]] : []));
    expect(boundSources).not.toContain(ownerHome);
    const ran = await run(cmd.file, cmd.args);
    const [first, homeListing, prefixListing, sshListing] = ran.stdout.split("\n");
    expect(first).toBe("interpreter-ran");
    expect(homeListing?.trim().split(" ").sort()).toEqual([".nvm", ".personalclaw"]);
    expect(prefixListing?.trim().split(" ").sort()).toEqual(["bin", "lib"]);
    expect(sshListing?.trim()).toBe("");
    expect(ran.stderr).toMatch(/No such file/);
  });

  it("a #! line naming a file in a credential folder adds no mount", async () => {
    const script = path.join(appDir, "sneaky");
    writeFileSync(script, `#!${path.join(ownerHome, ".config", "gh", "hosts.yml")}\n`, { mode: 0o755 });
    const cmd = wrapInSandbox({ file: "./sneaky", args: [], cwd: appDir }, wrapOpts());
    expect(cmd.args.some((arg) => arg.startsWith(path.join(ownerHome, ".config")))).toBe(false);
  });

  it("a #! line naming an interpreter through /proc, or a folder named like one, adds no mount", () => {
    // An interpreter prefix the bridge finds by a path through /proc (/proc/self/root here, or
    // /proc/2/cwd, which is the host's / to the bridge and the app's own folder to the child).
    const prefix = path.join(root, "through-proc");
    mkdirSync(path.join(prefix, "bin"), { recursive: true });
    mkdirSync(path.join(prefix, "lib"), { recursive: true });
    writeFileSync(path.join(prefix, "bin", "node"), "#!/bin/sh\n", { mode: 0o755 });
    // A host folder that is named like an interpreter and holds what a bundle wants to read.
    const lookalike = path.join(root, "conf", "python3");
    mkdirSync(lookalike, { recursive: true });
    writeFileSync(path.join(lookalike, "secret.conf"), "not for apps");
    for (const line of [
      `/proc/self/root${prefix}/bin/node`,
      `/proc/self/cwd/../../../..${prefix}/bin/node`,
      // The same through other spellings: a doubled slash, a dot, a climb back out of /usr.
      `//proc/self/root${prefix}/bin/node`,
      `/./proc/self/root${prefix}/bin/node`,
      `/usr/../proc/self/root${prefix}/bin/node`,
      lookalike,
    ]) {
      const script = path.join(appDir, "via-proc");
      writeFileSync(script, `#!${line}\n`, { mode: 0o755 });
      const cmd = wrapInSandbox({ file: "./via-proc", args: [], cwd: appDir }, wrapOpts());
      const mounts = cmd.args.slice(0, cmd.args.indexOf("--"));
      expect(
        mounts.filter((arg) => arg.startsWith(prefix) || arg.startsWith(path.dirname(lookalike))),
        line,
      ).toEqual([]);
    }
    // The same interpreter named plainly is shown, as any interpreter outside the system folders is.
    writeFileSync(path.join(appDir, "plain"), `#!${prefix}/bin/node\n`, { mode: 0o755 });
    const plain = wrapInSandbox({ file: "./plain", args: [], cwd: appDir }, wrapOpts());
    expect(plain.args).toContain(path.join(prefix, "bin"));
  });
});

describe("wrapInSandbox: what the child may write", () => {
  it("only data/ and the private /tmp are writable; the root, the app folder and /etc are not", async () => {
    const target = path.join(dataDir, "w.txt");
    const outside = path.join(appDir, "w.txt");
    const args = [
      path.join(appDir, "read-files.mjs"),
      "--write",
      target,
      outside,
      "/etc/pc-sandbox-test",
      "/pc-sandbox-test",
      "/tmp/scratch",
    ];
    const writable = await run(
      ...(Object.values(wrapInSandbox({ file: process.execPath, args, cwd: appDir }, wrapOpts())) as [
        string,
        string[],
      ]),
    );
    expect(writable.stdout).toContain(`WRITE ${target} ok`);
    expect(writable.stdout).toContain(`WRITE ${outside} EROFS`);
    expect(writable.stdout).toContain("WRITE /etc/pc-sandbox-test EROFS");
    expect(writable.stdout).toContain("WRITE /pc-sandbox-test EROFS");
    expect(writable.stdout).toContain("WRITE /tmp/scratch ok");
    expect(readFileSync(target, "utf8")).toBe("written from the sandbox\n");

    rmSync(target);
    const readOnly = await run(
      ...(Object.values(wrapInSandbox({ file: process.execPath, args, cwd: appDir }, wrapOpts({ writable: [] }))) as [
        string,
        string[],
      ]),
    );
    expect(readOnly.stdout).toContain(`WRITE ${target} EROFS`);
  });

  it("a writable folder outside the app folder, or a read-only one holding the PersonalClaw home, is refused when the plan is built", () => {
    expect(() =>
      wrapInSandbox({ file: "/bin/true", args: [], cwd: appDir }, wrapOpts({ writable: [ownerHome] })),
    ).toThrow(/inside the app folder/);
  });
});

describe("wrapInSandbox: namespaces", () => {
  it("the child has no capabilities and its own pid namespace", async () => {
    const cmd = wrapInSandbox(
      { file: "/bin/sh", args: ["-c", "grep CapEff /proc/self/status; ls /proc | grep -c '^[0-9]'"], cwd: appDir },
      wrapOpts(),
    );
    const result = await run(cmd.file, cmd.args);
    expect(result.stdout).toContain("CapEff:\t0000000000000000");
    const pidCount = Number(result.stdout.trim().split("\n").at(-1));
    expect(pidCount).toBeLessThan(6); // bwrap's init, sh, grep/ls: not the host's processes
  });

  it("the child has its own network namespace: host loopback servers, UDP and abstract sockets are out of reach", async () => {
    const server = net.createServer((s) => {
      s.on("error", () => {});
      s.end("hi");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const abstract = net.createServer((s) => s.end("hi"));
    await new Promise<void>((r) => abstract.listen(`\0pc-sbx-abstract-${process.pid}`, r));
    const port = (server.address() as net.AddressInfo).port;
    const probe = [
      `const net=require('net');const out=[];const done=()=>{if(out.length===2){console.log(out.join(' '));process.exit(0)}};`,
      `net.connect(${port},'127.0.0.1').on('connect',()=>{out.push('TCP-CONNECTED');done()}).on('error',e=>{out.push('TCP-'+e.code);done()});`,
      `net.connect('\\0pc-sbx-abstract-${process.pid}').on('connect',()=>{out.push('ABSTRACT-CONNECTED');done()}).on('error',e=>{out.push('ABSTRACT-'+e.code);done()});`,
    ].join("");
    try {
      const cmd = wrapInSandbox({ file: process.execPath, args: ["-e", probe], cwd: appDir }, wrapOpts());
      const result = await run(cmd.file, cmd.args);
      expect(result.stdout).toContain("TCP-ECONNREFUSED");
      expect(result.stdout).toContain("ABSTRACT-ECONNREFUSED");
      const udp = wrapInSandbox(
        {
          file: process.execPath,
          args: [
            "-e",
            "require('dgram').createSocket('udp4').send('x',53,'1.1.1.1',(e)=>{console.log(e?'UDP-'+e.code:'UDP-SENT');process.exit(0)})",
          ],
          cwd: appDir,
        },
        wrapOpts(),
      );
      expect((await run(udp.file, udp.args)).stdout).toContain("UDP-ENETUNREACH");
    } finally {
      server.close();
      abstract.close();
    }
  });

  it("the gateway reaches a confined backend only through the listening socket handed to it", async () => {
    copyFileSync(path.join(fixtures, "healthy.mjs"), path.join(appDir, "healthy.mjs"));
    const listener = await openSlotListener(path.join(root, "run"), 3);
    const cmd = wrapInSandbox(
      { file: process.execPath, args: [path.join(appDir, "healthy.mjs")], cwd: appDir },
      wrapOpts({ gateway: { listenFd: SLOT_LISTEN_FD, backendPort: 8080 } }),
    );
    const child = spawnChild(
      { file: cmd.file, args: cmd.args, cwd: "/" },
      {
        env: { PATH: "/usr/bin:/bin", PORT: "8080", ...cmd.env },
        stdio: withListener(["ignore", "ignore", "pipe"], listener.fd),
        boxed: true,
      },
    );
    listener.handOver();
    try {
      const socketPath = path.join(root, "run", slotSocketName(3));
      expect(await eventually(() => answersAt(socketPath), true)).toBe(true);
    } finally {
      child.kill("SIGKILL");
    }
  });
});

describe("wrapInSandbox: lifetime, bounds and the command line", () => {
  it("a sandboxed child dies when the process that started bwrap is killed", async () => {
    copyFileSync(path.join(fixtures, "healthy.mjs"), path.join(appDir, "healthy.mjs"));
    const socketPath = path.join(root, "run", "standin.sock");
    const cmd = wrapInSandbox(
      { file: process.execPath, args: [path.join(appDir, "healthy.mjs")], cwd: appDir },
      wrapOpts({ gateway: { listenFd: SLOT_LISTEN_FD, backendPort: 8080 } }),
    );
    // A stand-in bridge: hands bwrap its listening socket and then waits; we SIGKILL it, as a hard kill of the bridge would.
    const script = [
      `const net=require("net"),fs=require("fs");const tmp=${JSON.stringify(`${socketPath}.new`)};const s=net.createServer().listen(tmp,()=>{`,
      `const c=require("child_process").spawn(${JSON.stringify(cmd.file)}, ${JSON.stringify(cmd.args)}, { stdio: ["ignore","ignore","ignore","ignore","ignore",s._handle.fd,"pipe","pipe"], env: ${JSON.stringify(hostSideEnv())} });`,
      `c.stdio[${SANDBOX_ENV_FD}].end(Buffer.from(${JSON.stringify(sandboxEnvArgs({ PATH: "/usr/bin:/bin", PORT: "8080", ...cmd.env }).toString("base64"))}, "base64"));`,
      `c.stdio[${SANDBOX_SECCOMP_FD}].end(Buffer.from(${JSON.stringify(seccompProgram()!.toString("base64"))}, "base64"));`,
      `fs.renameSync(tmp, ${JSON.stringify(socketPath)});s.close();});setInterval(() => {}, 1000);`,
    ].join("");
    const bridge = spawn(process.execPath, ["-e", script], { stdio: "ignore" });
    try {
      expect(await eventually(() => answersAt(socketPath), true)).toBe(true);
      bridge.kill("SIGKILL");
      expect(await eventually(() => answersAt(socketPath), false)).toBe(false);
    } finally {
      bridge.kill("SIGKILL");
    }
  });

  it("/tmp and /dev/shm hold no more than their share of the storage limit", async () => {
    const cmd = wrapInSandbox(
      {
        file: "/bin/sh",
        args: [
          "-c",
          "for d in /tmp /dev/shm; do head -c 2097152 /dev/zero > $d/fill 2>/dev/null; echo $d $(wc -c < $d/fill); done",
        ],
        cwd: "/tmp",
      },
      wrapOpts({ tmpSizeBytes: 1024 * 1024 }),
    );
    const ran = await run(cmd.file, cmd.args);
    // Each stops at 1 MiB (the kernel refuses the rest), never the 2 MiB asked for.
    expect(ran.stdout.trim().split("\n")).toEqual(["/tmp 1048576", "/dev/shm 1048576"]);
  });

  it("no environment value is put on bwrap's command line, which every local user can read", () => {
    const cmd = wrapInSandbox({ file: "node", args: ["server.js"], cwd: appDir }, wrapOpts());
    expect(cmd.args).not.toContain("--setenv");
    expect(cmd.args).toContain("--new-session");
    expect(cmd.args).toContain("--die-with-parent");
  });
});
