// Every text an app controls reaches the terminal through the one text-safety module. A manifest
// whose version, display name, description and reasons carry CR, ANSI erases, the line-wrap
// switch ESC[?7l, tabs and bidi overrides (enough to rewrite its `apps list` line into the
// built-in Welcome app's) goes through every command that prints app data, and no raw control
// character but the newlines between the command's own lines reaches stdout or stderr.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeHome, removeHome, runCli, startGateway, type RunningGateway } from "./helpers/gateway";

const FORGE = "\r\u001b[2K\u001b[?7lwelcome\t0.1.0\tbuiltin\u202e\u0007";
const NAME = "hostile-text";

function manifest(version: string) {
  return {
    name: NAME,
    version,
    displayName: `Hostile${FORGE}`,
    description: `says${FORGE}\nInstalled welcome`,
    permissions: { agent: "text", cron: true, storage: true },
    crons: [{ name: "tick", schedule: "0 3 * * *", prompt: `do${FORGE}` }],
    mcpServers: { notes: { command: `node${FORGE}`, args: [`x${FORGE}`] } },
    secrets: [{ name: "HOSTILE_TOKEN", why: `because${FORGE}` }],
    requires: [{ name: `Thing${FORGE}`, why: `why${FORGE}`, how: `how${FORGE}` }],
    launches: [{ program: `prog${FORGE}`, why: `why${FORGE}` }],
    writes: [{ path: `~/x${FORGE}`, why: `why${FORGE}` }],
  };
}

function writeBundle(dir: string, version: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "app.json"), JSON.stringify(manifest(version)));
}

/** Any control, bidi or invisible format character but the newline and the tab between columns. */
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

describe("CLI output of hostile app text", () => {
  let gw: RunningGateway;
  const folders = makeHome("pc-hostile-text-");
  const v1 = join(folders, "v1");
  const v2 = join(folders, "v2");

  beforeAll(async () => {
    writeBundle(v1, `1.0.0${FORGE}`);
    writeBundle(v2, `2.0.0${FORGE}`);
    gw = await startGateway({ env: { PERSONALCLAW_SKIP_APP_BACKENDS: "1" } });
  }, 60_000);
  afterAll(async () => {
    await gw?.stop();
    if (gw) removeHome(gw.home);
    removeHome(folders);
  });

  const home = () => ["--home", gw.home];
  const outputs: Array<[string, { code: number | null; stdout: string; stderr: string }]> = [];
  async function run(...args: string[]) {
    const result = await runCli([...args, ...home()]);
    outputs.push([args.join(" "), result]);
    return result;
  }

  it("reaches the terminal escaped from every command that prints app data", async () => {
    await run("apps", "preview", v1);
    const installed = await run("apps", "install", v1, "--yes");
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stdout).toContain(`Installed ${NAME} 1.0.0\\r\\x1b[2K\\x1b[?7lwelcome\\t0.1.0`);
    const listed = await run("apps", "list");
    expect(listed.stdout).toContain(`${NAME}\t1.0.0\\r\\x1b[2K`);
    // Its tab is escaped too: the line keeps its five columns, the last two its own.
    const row = listed.stdout.split("\n").find((line) => line.startsWith(`${NAME}\t`))!;
    expect(row.split("\t")).toEqual([NAME, expect.stringContaining("welcome"), "local", "enabled", "no backend"]);
    await run("apps", "jobs", NAME);
    await run("mcp", "list");
    await run("secrets", "list");
    await run("approvals", "list");
    await run("apps", "update", NAME, v2, "--yes");
    await run("apps", "list");
    await run("apps", "uninstall", NAME);
    await run("apps", "list", "--parked");
    await run("status");
    for (const [command, { stdout, stderr }] of outputs) {
      expect(stdout, `${command} stdout`).not.toMatch(RAW_CONTROL);
      expect(stderr, `${command} stderr`).not.toMatch(RAW_CONTROL);
    }
    // The parked data names the version it was kept from, escaped.
    expect(outputs.at(-2)![1].stdout).toContain(`${NAME}\t2.0.0\\r\\x1b[2K`);
  }, 120_000);
});
