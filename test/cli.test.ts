// The personalclaw command as people meet it, through real CLI processes against temporary
// homes: a refused command line exits 2 with one sentence (every row's refusals and help are
// checked in-process, host-bridge/cli/command-line-answers.test.ts), --help and --version
// answer, a home without a gateway is a sentence with the fix (carrying the invocation and
// --home), and `apps new` / `apps dev` produce apps that install and answer through a real
// gateway with real bubblewrap.
import { spawn } from "node:child_process";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  cliPath,
  gatewayPerSuite,
  makeHome,
  removeHome,
  repoRoot,
  runCli as runAnyCli,
  writeUnansweringGateway,
} from "./helpers/gateway";

// As a person runs it: not under npx or an npm script (the runner of this suite may be one).
const runCli = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  runAnyCli(args, { npm_command: "", npm_lifecycle_event: "", ...env });
const STACK = /\n\s+at |node:internal/;
const version = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")).version as string;
const scratch = makeHome("pc-cli-");
afterAll(() => removeHome(scratch));

function expectOneSentence(result: { code: number | null; stdout: string; stderr: string }, what: string): void {
  expect(result.code, `${what}: ${result.stderr}`).toBe(2);
  expect(result.stdout, what).toBe("");
  expect(result.stderr, what).toMatch(/^personalclaw: [^\n]+--help`\.\n$/);
  expect(result.stderr, what).not.toMatch(STACK);
}

describe("the command table", () => {
  it("through a real process: a refused line exits 2 with one sentence on stderr and no stack, --json puts the envelope on stdout, --help exits 0", async () => {
    // Every row's refusals and help are asked of main() in-process (host-bridge/cli/command-line-answers.test.ts);
    // the exit status and which stream carries what are what only a process shows.
    const typo = await runCli(["apps", "instal", "x"]);
    expectOneSentence(typo, "apps instal");
    expect(typo.stderr).toContain("'apps' has no subcommand 'instal' (did you mean install?)");
    const json = await runCli(["token", "--json", "--ttl", "banana"]);
    expect(json.code).toBe(2);
    expect(json.stderr).toBe("");
    expect(JSON.parse(json.stdout).error.code).toBe("cli_usage");
    const help = await runCli(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout.startsWith("Usage: ")).toBe(true);
    expect(help.stderr).toBe("");
  });

  it("prints the package version with --version and `version --json`", async () => {
    const plain = await runCli(["--version"]);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(new RegExp(`^personalclaw ${version.replace(/\./g, "\\.")} \\(workerd \\S+, node `));
    const json = await runCli(["version", "--json"]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ version, workerd: expect.stringMatching(/^workerd /) });
  });

  it("docs/cli.md equals a fresh render of the command table", () => {
    const fresh = execFileSync(process.execPath, [join(repoRoot, "dist", "render-cli.mjs")], { encoding: "utf8" });
    expect(readFileSync(join(repoRoot, "docs", "cli.md"), "utf8")).toBe(fresh);
  });
});

describe("a home without a gateway", () => {
  it("token on a never-started home says so with the fix, carrying the invocation and --home", async () => {
    const home = join(scratch, "fresh home");
    const result = await runCli(["token", "--home", home]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe(
      `personalclaw: No gateway is running for ${home}; start it with: node ${cliPath} start --home '${home}'\n`,
    );
    expect(result.stderr).not.toMatch(/ENOENT|\n\s+at /);
    const json = await runCli(["token", "--json", "--home", home]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout).error.code).toBe("gateway_not_running");
    expect(existsSync(home)).toBe(false);
  });

  it("a stopped home (secret left, no gateway.json) is not running either, and status says so", async () => {
    const home = join(scratch, "stopped");
    mkdirSync(home);
    writeFileSync(join(home, ".local_secret"), "0".repeat(64));
    const token = await runCli(["token", "--home", home]);
    expect(token.code).toBe(1);
    expect(token.stderr).toContain(
      `No gateway is running for ${home}; start it with: node ${cliPath} start --home ${home}`,
    );
    const status = await runCli(["status", "--json", "--home", home]);
    expect(status.code).toBe(1);
    expect(JSON.parse(status.stdout)).toEqual({ running: false, home });
  });

  it("says 'not answering' with stop and start hints when gateway.json names a gateway whose port is dead", async () => {
    const home = join(scratch, "silent");
    mkdirSync(home);
    const port = await new Promise<number>((resolvePort) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolvePort(port));
      });
    });
    // This test process stands in for the gateway's live CLI process; nothing listens on the port.
    writeUnansweringGateway(home, port);
    const result = await runCli(["apps", "list", "--home", home]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`The gateway is not answering on 127.0.0.1:${port} (ECONNREFUSED)`);
    expect(result.stderr).toContain(
      `run \`node ${cliPath} stop --home ${home}\` and then \`node ${cliPath} start --home ${home}\``,
    );
    expect(result.stderr.split("\n")).toHaveLength(2);
    expect(result.stderr).not.toMatch(STACK);
    const json = await runCli(["apps", "list", "--json", "--home", home]);
    expect(JSON.parse(json.stdout).error.code).toBe("gateway_not_answering");
    // A record whose process is gone is a gateway that is not running.
    writeFileSync(
      join(home, "gateway.json"),
      JSON.stringify({ pid: 2 ** 22 + 1, port, url: "", bridgePort: 1, startedAt: "", workerdPid: null }),
    );
    const dead = await runCli(["apps", "list", "--home", home]);
    expect(dead.code).toBe(1);
    expect(dead.stderr).toContain(`No gateway is running for ${home}`);
  });

  it("leaves --home out of a hint for the default home, and says `personalclaw` when that is how it was run", async () => {
    const user = join(scratch, "user");
    const bin = join(scratch, "bin");
    mkdirSync(user);
    mkdirSync(bin);
    symlinkSync(cliPath, join(bin, "personalclaw"));
    const env = { HOME: user, PERSONALCLAW_HOME: "", npm_command: "", npm_lifecycle_event: "" };
    const viaNode = await runCli(["token"], env);
    expect(viaNode.stderr).toBe(
      `personalclaw: No gateway is running for ~/.personalclaw; start it with: node ${cliPath} start\n`,
    );
    const onPath = await new Promise<string>((resolveRun) => {
      const child = spawn(join(bin, "personalclaw"), ["token"], {
        env: { ...process.env, ...env, PATH: `${bin}:${process.env.PATH}` },
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (chunk) => (stderr += chunk));
      child.on("close", () => resolveRun(stderr));
    });
    expect(onPath).toBe("personalclaw: No gateway is running for ~/.personalclaw; start it with: personalclaw start\n");
  });
});

describe("apps new and apps dev against a real gateway", () => {
  const gw = gatewayPerSuite();

  async function answerOf(name: string): Promise<{ status: number; body: Record<string, unknown> }> {
    const response = await gw.fetch(`/apps/${name}/api/hello`);
    return { status: response.status, body: (await response.json().catch(() => ({}))) as Record<string, unknown> };
  }

  async function waitForAnswer(name: string, hello: string, timeoutMs = 30_000): Promise<Record<string, unknown>> {
    const until = Date.now() + timeoutMs;
    let last = await answerOf(name);
    while (!(last.status === 200 && last.body.hello === hello) && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 200));
      last = await answerOf(name);
    }
    return last.body;
  }

  it("a list with nothing in it says so in a sentence instead of printing nothing", async () => {
    const said = async (args: string[]) => {
      const result = await runCli([...args, "--home", gw.home]);
      expect(result.code, result.stderr).toBe(0);
      return result.stdout;
    };
    expect(await said(["apps", "list", "--parked"])).toBe("No data is parked: no uninstall kept an app's data.\n");
    expect(await said(["secrets", "list"])).toMatch(/^No secrets are stored/);
    expect(await said(["security", "events", "--kind", "no_such_kind"])).toBe(
      "No security events match these filters.\n",
    );
  });

  for (const kind of ["node", "python"] as const) {
    it(`a ${kind} app from \`apps new\` passes its own test, previews, installs and answers through the gateway`, async () => {
      const name = `fresh-${kind}`;
      const folder = join(scratch, name);
      const created = await runCli(["apps", "new", name, "--dir", folder, ...(kind === "python" ? ["--python"] : [])]);
      expect(created.code, created.stderr).toBe(0);
      expect(created.stdout).toContain(`apps install ${folder} --yes`);
      const manifest = JSON.parse(readFileSync(join(folder, "app.json"), "utf8"));
      expect(manifest.name).toBe(name);
      expect(existsSync(join(folder, kind === "node" ? "vendor/app-sdk/index.js" : "personalclaw_verify.py"))).toBe(
        true,
      );
      // The author's own test runs as it was written.
      execFileSync(kind === "node" ? process.execPath : "python3", kind === "node" ? ["--test"] : ["-m", "unittest"], {
        cwd: folder,
        stdio: "pipe",
      });
      const preview = await runCli(["apps", "preview", folder, "--json", "--home", join(scratch, "no-gateway")]);
      expect(preview.code, preview.stdout).toBe(0);
      expect(JSON.parse(preview.stdout).digest).toMatch(/^sha256:[0-9a-f]{64}$/);
      const installed = await runCli(["apps", "install", folder, "--yes", "--home", gw.home]);
      expect(installed.code, installed.stderr).toBe(0);
      expect(await waitForAnswer(name, "world")).toMatchObject({ app: name, hello: "world", verified: true });
    });
  }

  it("an unexpected failure is one sentence naming where its stack went; PERSONALCLAW_DEBUG=1 shows the stack", async () => {
    const missing = join(scratch, "no-such-checkpoint");
    const failed = await runCli(["security", "verify", "--checkpoint", missing, "--home", gw.home]);
    const log = join(gw.home, "logs", "cli-errors.log");
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(
      /^personalclaw: `security verify` failed unexpectedly \(ENOENT[^\n]*\); the details are in /,
    );
    expect(failed.stderr).toContain(`the details are in ${log}.`);
    expect(failed.stderr.split("\n")).toHaveLength(2);
    expect(failed.stderr).not.toMatch(STACK);
    expect(readFileSync(log, "utf8")).toMatch(/security verify: Error: ENOENT[^]*\n\s+at /);
    const debug = await runCli(["security", "verify", "--checkpoint", missing, "--home", gw.home], {
      PERSONALCLAW_DEBUG: "1",
    });
    expect(debug.code).not.toBe(0);
    expect(debug.stderr).toMatch(/\n\s+at /);
  });

  it("apps new refuses a non-empty folder and a name the manifest refuses, writing nothing", async () => {
    const folder = join(scratch, "taken");
    mkdirSync(folder);
    writeFileSync(join(folder, "notes.txt"), "mine");
    const taken = await runCli(["apps", "new", "taken", "--dir", folder]);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain(`${folder} exists and is not empty`);
    expect(readdirSync(folder)).toEqual(["notes.txt"]);
    const bad = await runCli(["apps", "new", "Not_Kebab", "--dir", join(scratch, "bad-name")]);
    expectOneSentence(bad, "Not_Kebab");
    expect(bad.stderr).toContain("must be kebab-case");
    expect(existsSync(join(scratch, "bad-name"))).toBe(false);
  });

  it("apps dev installs with --yes, re-previews after a change, shows it and updates through consent", async () => {
    const name = "dev-loop";
    const folder = join(scratch, name);
    expect((await runCli(["apps", "new", name, "--dir", folder])).code).toBe(0);
    const dev = spawn(
      process.execPath,
      [cliPath, "apps", "dev", folder, "--yes", "--debounce-ms", "150", "--home", gw.home],
      {
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, npm_command: "" },
      },
    );
    let out = "";
    dev.stdout.on("data", (chunk) => (out += chunk));
    dev.stderr.on("data", (chunk) => (out += chunk));
    const waitFor = async (text: string, count = 1) => {
      const until = Date.now() + 60_000;
      while (out.split(text).length - 1 < count && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
      return out.split(text).length - 1;
    };
    try {
      expect(await waitFor(`Installed ${name}`), out).toBe(1);
      expect(out).toMatch(/Consent digest: sha256:[0-9a-f]{64}/);
      expect(await waitForAnswer(name, "world")).toMatchObject({ hello: "world" });
      const server = join(folder, "server.mjs");
      writeFileSync(server, readFileSync(server, "utf8").replace('hello: "world"', 'hello: "again"'));
      expect(await waitFor("Changed: server.mjs"), out).toBe(1);
      expect(await waitFor(`Updated ${name}`), out).toBe(1);
      expect(out.match(/Consent digest: sha256:[0-9a-f]{64}/g)).toHaveLength(2);
      expect(await waitForAnswer(name, "again")).toMatchObject({ hello: "again" });
    } finally {
      dev.kill("SIGINT");
      await new Promise((r) => dev.once("close", r));
    }
    expect(out).not.toMatch(STACK);
  }, 120_000);

  it("apps dev installs nothing when the answer on stdin is no", async () => {
    const name = "dev-declined";
    const folder = join(scratch, name);
    expect((await runCli(["apps", "new", name, "--dir", folder])).code).toBe(0);
    const dev = spawn(process.execPath, [cliPath, "apps", "dev", folder, "--home", gw.home], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    dev.stdout.on("data", (chunk) => (out += chunk));
    try {
      const until = Date.now() + 30_000;
      while (!out.includes("[y/N]") && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
      dev.stdin.write("n\n");
      while (!out.includes("Not installed") && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
      expect(out).toContain(`Install ${name} with exactly these bytes`);
      expect(out).toContain("Not installed");
    } finally {
      dev.kill("SIGINT");
      await new Promise((r) => dev.once("close", r));
    }
    expect((await gw.fetch(`/api/apps/${name}`)).status).toBe(404);
  });
});
