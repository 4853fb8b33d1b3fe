// A newcomer's first hour, as the README tells it, in a fresh clone of this repository with a
// temporary home: `npm start` (the shipped build, made on first run), the sign-in link it
// prints, `apps new` scaffolding an app, `apps install`, and the app opened in Chromium from
// the dashboard. Every command's output is checked for a stack trace. The clone shares this
// checkout's node_modules: `npm ci` needs the registry, which the suite never depends on.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { Browser } from "playwright-core";
import { repoRoot } from "./helpers/gateway";
import { launchChromium } from "./helpers/browser";

/** A Node stack frame or an internal module path: what a newcomer must never be shown. */
const STACK_TRACE = /^\s+at .+[:(]\d+|node:internal/m;

describe("a newcomer following the README", () => {
  const root = mkdtempSync(join(tmpdir(), "pc-newcomer-"));
  const clone = join(root, "personalclaw");
  const home = join(root, "home");
  const appFolder = join(root, "hello-notes");
  const env = { ...process.env, PERSONALCLAW_HOME: home, PERSONALCLAW_DEBUG: "" };
  let gateway: ChildProcess | undefined;
  let browser: Browser | undefined;
  let startOutput = "";

  /** Runs `node bin/personalclaw.mjs …` in the clone, as the README says to inside the repository. */
  function cli(args: string[]): { code: number; output: string } {
    try {
      const stdout = execFileSync(process.execPath, [join(clone, "bin", "personalclaw.mjs"), ...args], {
        cwd: clone,
        env,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
        timeout: 120_000,
      });
      return { code: 0, output: stdout };
    } catch (error) {
      const failed = error as { status: number; stdout: string; stderr: string };
      return { code: failed.status, output: `${failed.stdout}${failed.stderr}` };
    }
  }

  beforeAll(async () => {
    execFileSync("git", ["clone", "--quiet", "--no-hardlinks", repoRoot, clone]);
    symlinkSync(join(repoRoot, "node_modules"), join(clone, "node_modules"));
    expect(existsSync(join(clone, "dist"))).toBe(false);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    if (gateway && gateway.exitCode === null) {
      gateway.kill("SIGTERM");
      await new Promise((resolvePromise) => gateway!.once("exit", resolvePromise));
    }
    rmSync(root, { recursive: true, force: true });
  });

  it("starts the gateway with npm start and is told where it runs and how to sign in", async () => {
    // `--port 0`: the suite runs beside other gateways; the README's default port may be taken.
    gateway = spawn("npm", ["start", "--silent", "--", "--port", "0"], {
      cwd: clone,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    gateway.stderr!.on("data", (chunk) => (startOutput += chunk));
    const line = await new Promise<string>((resolvePromise, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ready line in 120 s: ${startOutput}`)), 120_000);
      const lines = createInterface({ input: gateway!.stdout! });
      lines.on("line", (text) => {
        startOutput += `${text}\n`;
        if (text.startsWith("PersonalClaw is running at")) {
          clearTimeout(timer);
          resolvePromise(text);
        }
      });
      gateway!.once("exit", (code) => reject(new Error(`npm start exited ${code}: ${startOutput}`)));
    });
    expect(line).toMatch(/^PersonalClaw is running at http:\/\/127\.0\.0\.1:\d+\/ — sign in: http:\/\/\S+token=\S+/);
    expect(startOutput).not.toMatch(STACK_TRACE);
    // The shipped build was made on first run, and it is not the test build.
    expect(existsSync(join(clone, "dist", "worker.js"))).toBe(true);
    expect(readFileSync(join(clone, "dist", "worker.js"), "utf8")).not.toContain("/api/test/");
  }, 180_000);

  it("scaffolds an app with apps new, and installs it after reading its review", () => {
    const created = cli(["apps", "new", "hello-notes", "--dir", appFolder]);
    expect(created.code, created.output).toBe(0);
    expect(created.output).not.toMatch(STACK_TRACE);
    expect(existsSync(join(appFolder, "app.json"))).toBe(true);

    const preview = cli(["apps", "preview", appFolder]);
    expect(preview.code, preview.output).toBe(0);
    expect(preview.output).toContain("hello-notes");
    expect(preview.output).not.toMatch(STACK_TRACE);

    const installed = cli(["apps", "install", appFolder, "--yes"]);
    expect(installed.code, installed.output).toBe(0);
    expect(installed.output).not.toMatch(STACK_TRACE);
  }, 240_000);

  it("signs in with the printed link and opens the new app from the dashboard in Chromium", async () => {
    const link = /sign in: (\S+)/.exec(startOutput)![1]!;
    const base = new URL(link).origin;
    browser = await launchChromium();
    const page = await browser.newPage();
    page.setDefaultTimeout(20_000);
    await page.goto(link);
    await page.goto(`${base}/#/apps/hello-notes`);
    await page.getByRole("link", { name: /open/i }).first().click();
    await page.waitForURL(/\/apps\/hello-notes\//);
    await expect.poll(() => page.locator("#answer").textContent(), { timeout: 20_000 }).toMatch(/hello/i);
  }, 120_000);

  it("answers a mistyped command with one sentence, and stops the gateway", () => {
    const typo = cli(["apps", "instal", appFolder]);
    expect(typo.code).toBe(2);
    expect(typo.output.trim().split("\n")).toHaveLength(1);
    expect(typo.output).not.toMatch(STACK_TRACE);

    const stopped = cli(["stop"]);
    expect(stopped.code, stopped.output).toBe(0);
    expect(stopped.output).not.toMatch(STACK_TRACE);
    const status = cli(["status"]);
    expect(status.output).toMatch(/not running/i);
    expect(status.output).not.toMatch(STACK_TRACE);
  }, 60_000);
});
