// An update ends an app's MCP server runs before it copies data/, even a run still being set
// up when the update comes (UPD-08): the real gateway and `personalclaw mcp run` as an agent
// starts it, with the sandbox off (where a server left running would outlive its run) and a
// bubblewrap on the run's PATH whose probe takes 3 s, as on a loaded machine. The update's
// SIGTERM lands while the run is in that probe: the server must never start, and the run must
// end at once rather than be killed after the grace.
import { spawn } from "node:child_process";
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliPath, removeHome, repoRoot, startGateway, type RunningGateway } from "./helpers/gateway";
import { install } from "./helpers/backends";

const fixture = join(repoRoot, "test", "fixtures", "backend-apps", "mcp-writer");

describe("an update and an MCP server run still being set up", () => {
  let root: string;
  let home: string;
  let gw: RunningGateway;

  beforeAll(async () => {
    root = mkdtempSync("/var/tmp/pc-mcp-hold-");
    home = join(root, "home");
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, "config.json"), JSON.stringify({ sandbox: { mode: "off" } }));
    gw = await startGateway({ home });
    await install(home, fixture);
  }, 120_000);

  afterAll(async () => {
    await gw?.stop();
    removeHome(root);
  });

  it("a SIGTERM during the run's setup keeps its server from starting, and the run ends at once", async () => {
    const slowBin = join(root, "slow-bin");
    mkdirSync(slowBin);
    writeFileSync(join(slowBin, "bwrap"), "#!/bin/sh\nsleep 3\nexit 1\n");
    chmodSync(join(slowBin, "bwrap"), 0o755);
    const run = spawn(process.execPath, [cliPath, "mcp", "run", "mcp-writer", "writer", "--home", home], {
      env: { PATH: `${slowBin}:${process.env.PATH}`, HOME: root },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stderr = "";
    run.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    run.stdout.resume();
    const ended = new Promise<number>((resolve) => run.once("exit", () => resolve(Date.now())));
    try {
      // The run has its launch and has recorded itself: it is in the sandbox probe now.
      const records = join(home, "run", "mcp", "mcp-writer");
      await expect.poll(() => existsSync(records) && readdirSync(records).length, { timeout: 10_000 }).toBe(1);

      const source = join(root, "source");
      cpSync(fixture, source, { recursive: true });
      const manifest = JSON.parse(readFileSync(join(source, "app.json"), "utf8"));
      writeFileSync(join(source, "app.json"), JSON.stringify({ ...manifest, version: "0.1.1" }));
      const started = Date.now();
      const update = await gw.fetch("/api/apps/mcp-writer/update", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ source }),
      });
      expect(update.status, await update.clone().text()).toBe(200);
      // Ended by the update's SIGTERM, not killed after the 5 s grace.
      expect((await ended) - started).toBeLessThan(4_000);
      expect(stderr).toContain("ending mcp-writer:writer: the app is being updated");
      // The server never ran: nothing of it in the old data/ or in the copy the update made.
      expect(existsSync(join(home, "apps", "mcp-writer", "data", "server.pid"))).toBe(false);
      expect(existsSync(join(home, "apps", "mcp-writer", "data", "counter"))).toBe(false);
      expect(readdirSync(records)).toEqual([]);
    } finally {
      run.kill("SIGKILL");
    }
  }, 60_000);
});
