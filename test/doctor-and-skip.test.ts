// `personalclaw doctor` rows on a real home, and PERSONALCLAW_SKIP_APP_BACKENDS=1.
import { describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeHome, removeHome, repoRoot, runCli, startGateway, testBuildCliPath } from "./helpers/gateway";

describe("personalclaw doctor", () => {
  it("prints one row per check with a fix, flags sandbox.mode off as a warning and a running gateway as ok", async () => {
    const home = makeHome();
    try {
      const before = await runCli(["doctor", "--json", "--home", home]);
      const rows = JSON.parse(before.stdout).rows as Array<{ name: string; status: string; message: string }>;
      expect(rows.map((r) => r.name)).toEqual([
        "node",
        "workerd",
        "bubblewrap",
        "child user",
        "home",
        "local secret",
        "sandbox",
        "bounds",
        "gateway",
        "security-log anchor",
        "setpriv",
        "auth mode",
      ]);
      expect(rows.find((r) => r.name === "gateway")).toMatchObject({
        status: "warn",
        message: expect.stringMatching(/personalclaw(\.mjs)? start --home /),
      });
      expect(before.code).toBe(0);
      // Never root: a root owner's children are named as the unprivileged user they run as.
      expect(rows.find((r) => r.name === "child user")).toMatchObject({
        status: "ok",
        message:
          process.getuid?.() === 0
            ? expect.stringMatching(/runs as root: every app child runs as \S+ \(uid [1-9]\d*/)
            : expect.stringContaining("run as you"),
      });

      const gw = await startGateway({ home });
      writeFileSync(join(home, "config.json"), JSON.stringify({ sandbox: { mode: "off" } }));
      const during = JSON.parse((await runCli(["doctor", "--json", "--home", home])).stdout).rows as typeof rows;
      expect(during.find((r) => r.name === "gateway")).toMatchObject({
        status: "ok",
        message: expect.stringContaining(String(gw.pid)),
      });
      expect(during.find((r) => r.name === "local secret")?.status).toBe("ok");
      expect(during.find((r) => r.name === "app folders")?.status).toBe("ok");
      expect(during.find((r) => r.name === "sandbox")).toMatchObject({
        status: "warn",
        message: expect.stringContaining("without bubblewrap"),
      });
      await gw.stop();

      writeFileSync(join(home, "config.json"), "{ not json");
      const testBuild = await runCli(["doctor", "--json", "--home", home], {}, undefined, testBuildCliPath);
      expect(testBuild.code).toBe(1);
      expect(JSON.parse(testBuild.stdout).rows.find((r: { name: string }) => r.name === "test build")).toMatchObject({
        status: "fail",
      });

      const broken = await runCli(["doctor", "--home", home]);
      expect(broken.code).toBe(1);
      expect(broken.stdout).toMatch(/^fail\s+config:/m);
    } finally {
      removeHome(home);
    }
  });
});

describe("PERSONALCLAW_SKIP_APP_BACKENDS=1", () => {
  it("installs an app but starts no backend, so its proxy answers 503 app_backend_unavailable", async () => {
    const gw = await startGateway({ env: { PERSONALCLAW_SKIP_APP_BACKENDS: "1" } });
    try {
      const installed = await runCli([
        "apps",
        "install",
        join(repoRoot, "apps", "fixtures", "node-notes"),
        "--yes",
        "--json",
        "--home",
        gw.home,
      ]);
      expect(installed.code, installed.stderr).toBe(0);
      const row = await (await gw.fetch("/api/apps/node-notes")).json();
      expect(row.backend === null || row.backend.running === false).toBe(true);
      const proxied = await gw.fetch("/apps/node-notes/api/echo");
      expect(proxied.status).toBe(503);
      expect((await proxied.json()).error.code).toBe("app_backend_unavailable");
      expect((await (await gw.fetch("/api/status")).json()).apps).toEqual({ installed: 2, running: 0 });
    } finally {
      await gw.stop();
      removeHome(gw.home);
    }
  });
});
