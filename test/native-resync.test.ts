// The native re-sync at start is all-or-nothing: a gateway killed after it moved a native app's
// data/ into the fresh copy in the quarantine, before that copy was in place, starts again with
// the app whole and its data/ kept (the next start empties the quarantine, which held it).
import { afterAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeHome, removeHome, startGateway, testBuildCliPath } from "./helpers/gateway";
import { waitForPause } from "./helpers/probe-app";

const ENV = { PERSONALCLAW_SKIP_APP_BACKENDS: "1" };

describe("the native re-sync at start", () => {
  const home = makeHome("pc-native-resync-");
  afterAll(() => removeHome(home));

  it("keeps a native app's data/ when the gateway is killed in the middle of its re-sync", async () => {
    const first = await startGateway({ home, env: ENV });
    const data = join(home, "apps", "welcome", "data");
    mkdirSync(data, { recursive: true });
    writeFileSync(join(data, "keep.txt"), "the owner's data\n");
    await first.stop();

    writeFileSync(join(home, "test-pause-at"), "native:welcome:data_moved");
    const killed = spawn(process.execPath, [testBuildCliPath, "start", "--port", "0", "--home", home], {
      env: { ...process.env, ...ENV },
      stdio: "ignore",
      detached: true,
    });
    const exited = new Promise((resolve) => killed.once("exit", resolve));
    await waitForPause(home, "native:welcome:data_moved");
    // At this moment data/ is in the quarantine, inside the fresh copy.
    expect(existsSync(join(home, "apps", "welcome"))).toBe(false);
    process.kill(-killed.pid!, "SIGKILL");
    await exited;
    rmSync(join(home, "test-pause-at"));

    const again = await startGateway({ home, env: ENV });
    try {
      expect(readFileSync(join(home, "apps", "welcome", "data", "keep.txt"), "utf8")).toBe("the owner's data\n");
      expect((await again.fetch("/api/apps/welcome")).status).toBe(200);
      expect(readdirSync(join(home, "apps")).filter((name) => name.includes(".previous-"))).toEqual([]);
      expect(readdirSync(join(home, "journal")).filter((name) => name.startsWith("native."))).toEqual([]);
    } finally {
      await again.stop();
    }
  }, 120_000);
});
