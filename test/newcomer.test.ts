// A newcomer's first hour, as the README tells it, in a fresh clone of this repository with a
// temporary home: `npm start` (the shipped build, made on first run), the sign-in link it
// prints, `apps new` scaffolding an app, `apps install`, and the app opened in Chromium from
// the dashboard; then the author's day: a new version that asks for a secret, updated from the
// app's page after reading what changes, the secret stored and assigned from the app's page, and
// an update whose backend fails its health check, its reason shown while the old version
// answers every request meanwhile (the scaffolded app keeps no data, so it can). Every
// command's output is checked for a stack trace. The clone shares this checkout's
// node_modules: `npm ci` needs the registry, which the suite never depends on.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { Browser, Page } from "playwright-core";
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
  let page: Page | undefined;
  let base = "";

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
    // The first start says what the code it prints is for, before the sign-in link.
    const codeAt = startOutput.indexOf("security log's verification code");
    expect(codeAt).toBeGreaterThanOrEqual(0);
    expect(codeAt).toBeLessThan(startOutput.indexOf("sign in:"));
    expect(startOutput).toContain("It is not a password");
    expect(startOutput).toContain("security verify --seed <code>");
    // Its hints name this clone's own script: `npx personalclaw` outside the clone would fetch from the registry.
    expect(startOutput).not.toContain("npx personalclaw");
    expect(line).toContain(`node ${join(clone, "bin", "personalclaw.mjs")} token`);
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
    base = new URL(link).origin;
    browser = await launchChromium();
    page = await browser.newPage();
    page.setDefaultTimeout(20_000);
    await page.goto(link);
    await page.goto(`${base}/#/apps/hello-notes`);
    // Open keeps the dashboard: the app opens in a tab of its own.
    const [appTab] = await Promise.all([
      page.context().waitForEvent("page"),
      page.getByRole("link", { name: /open/i }).first().click(),
    ]);
    await appTab.waitForURL(/\/apps\/hello-notes\//);
    await expect.poll(() => appTab.locator("#answer").textContent(), { timeout: 20_000 }).toMatch(/hello/i);
    await appTab.close();
    expect(new URL(page.url()).hash).toBe("#/apps/hello-notes");
  }, 120_000);

  /** The app's answer as the owner's browser gets it, through the gateway. */
  async function hello(): Promise<{ status: number; body: Record<string, unknown> }> {
    return page!.evaluate(async () => {
      const response = await fetch("/apps/hello-notes/api/hello");
      return { status: response.status, body: (await response.json().catch(() => ({}))) as Record<string, unknown> };
    });
  }

  /** The author changes the app: a new version of app.json and of the backend's source. */
  function editApp(version: string, manifest: (m: Record<string, unknown>) => void, source: (s: string) => string) {
    const manifestPath = join(appFolder, "app.json");
    const parsed = JSON.parse(readFileSync(manifestPath, "utf8")) as Record<string, unknown>;
    parsed.version = version;
    manifest(parsed);
    writeFileSync(manifestPath, `${JSON.stringify(parsed, null, 2)}\n`);
    const serverPath = join(appFolder, "server.mjs");
    writeFileSync(serverPath, source(readFileSync(serverPath, "utf8")));
  }

  /** Update from the app's page: the folder, what changes, then Update now. */
  async function updateFromAppPage(): Promise<void> {
    const detail = page!.locator("#app-detail[data-app=hello-notes]");
    await detail.getByRole("button", { name: "Update hello-notes" }).click();
    await detail.getByLabel("Folder of the new version of hello-notes").fill(appFolder);
    await detail.getByRole("button", { name: "Preview update" }).click();
    await detail.locator(".update-changes").waitFor({ timeout: 60_000 });
    await detail.getByRole("button", { name: "Update now: hello-notes" }).click();
  }

  it("as the app's author: a version that asks for a secret is updated from its page, and the secret is stored and assigned there", async () => {
    editApp(
      "0.2.0",
      (m) => (m.secrets = [{ name: "HELLO_KEY", why: "to greet you with a word you chose" }]),
      (s) => s.replace('hello: "world"', 'hello: "world", keyed: process.env.HELLO_KEY !== undefined'),
    );
    await page!.goto(`${base}/#/apps/hello-notes`);
    const detail = page!.locator("#app-detail[data-app=hello-notes]");
    await detail.waitFor();
    await updateFromAppPage();
    await detail.getByText("Updated hello-notes to 0.2.0.").waitFor({ timeout: 90_000 });
    expect((await hello()).body.keyed).toBe(false);

    // The secret is stored in Settings, then assigned from the app's page, which restarts it.
    await page!.goto(`${base}/#/settings`);
    await page!.locator("#secret-name").fill("HELLO_KEY");
    await page!.locator("#secret-value").fill("newcomer-key-Zq8Wd3Lp");
    await page!.locator("#secret-form").getByRole("button", { name: "Store" }).click();
    await page!.locator('#secrets tr[data-secret="HELLO_KEY"]').waitFor();
    await page!.goto(`${base}/#/apps/hello-notes`);
    const ask = page!.locator('#app-secrets li[data-secret="HELLO_KEY"]');
    await ask.locator(".secret-state", { hasText: "Not assigned" }).waitFor();
    await ask.getByRole("button", { name: "Assign and restart: HELLO_KEY of hello-notes" }).click();
    await ask.locator(".secret-state", { hasText: "Assigned: HELLO_KEY." }).waitFor({ timeout: 60_000 });
    await expect.poll(async () => (await hello()).body.keyed, { timeout: 30_000 }).toBe(true);
  }, 240_000);

  it("as the app's author: an update whose backend fails its health check shows what it answered, and the old version keeps answering", async () => {
    editApp(
      "0.3.0",
      // The author gives the backend 5 s to start (30 s unless set), to learn sooner that it failed.
      (m) => ((m.backend as Record<string, unknown>).startTimeoutSeconds = 5),
      (s) =>
        s.replace(
          '"GET /health": (req, res) => send(res, 200, { ok: true }),',
          '"GET /health": (req, res) => send(res, 500, { error: "the notes database is not migrated" }),',
        ),
    );
    await page!.goto(`${base}/#/apps/hello-notes`);
    const detail = page!.locator("#app-detail[data-app=hello-notes]");
    await detail.waitFor();
    await updateFromAppPage();
    // The scaffolded app keeps no data: the page says the current version keeps answering, and
    // it does, every time it is asked, for the whole of the failed health gate.
    await detail.getByText("the current version keeps answering until the new one passes its health check").waitFor();
    const failure = detail.locator(".update-review .notice-error");
    const answers: Array<{ status: number; body: Record<string, unknown> }> = [];
    while (!(await failure.isVisible())) answers.push(await hello());
    const said = (await failure.textContent()) ?? "";
    expect(said).toContain("500");
    expect(said).toContain("the notes database is not migrated");
    expect(said).toContain("within 5 s");
    expect(said).not.toMatch(STACK_TRACE);
    expect(answers.length).toBeGreaterThan(5);
    // The update's steps stay below the error: the old version was never stopped, and why.
    const stopOld = detail.locator('.install-step[data-step="stop_old"]');
    expect(await stopOld.getAttribute("data-status")).toBe("skipped");
    expect(await stopOld.locator(".step-message").textContent()).toBe(
      "the app declares no storage: its current version keeps answering until the new one is healthy",
    );
    expect(await detail.locator('.install-step[data-step="health"]').getAttribute("data-status")).toBe("failed");
    expect(await detail.locator('.install-step[data-step="switch"]').getAttribute("data-status")).toBe("not-run");
    expect(answers.filter((a) => a.status !== 200 || a.body.keyed !== true)).toEqual([]);
    expect((await hello()).body).toMatchObject({ hello: "world", keyed: true });
    const listed = cli(["apps", "list"]);
    expect(listed.output).toMatch(/hello-notes\s+0\.2\.0/);
  }, 240_000);

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
