// An app's UI in a real browser: it works with its own backend through the app token it is
// handed, and — sandboxed in an opaque origin — it cannot act with the owner's session.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { launchChromium } from "./helpers/browser";
import { removeHome, repoRoot, runCli, startGateway, type RunningGateway } from "./helpers/gateway";

describe("an app's UI in Chromium", () => {
  let gw: RunningGateway;
  let browser: Browser;
  beforeAll(async () => {
    [gw, browser] = await Promise.all([
      startGateway({ home: mkdtempSync("/var/tmp/pc-ui-sandbox-") }),
      launchChromium(),
    ]);
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
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    if (gw) removeHome(gw.home);
  });

  it("talks to its own backend with its token but cannot use the owner's session", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems: string[] = [];
    page.on("pageerror", (error) => problems.push(String(error)));
    await page.goto(gw.url);
    await page.goto(`${gw.base}/apps/node-notes/`);
    expect(new URL(page.url()).searchParams.get("app_token")).toMatch(/^[\w-]+\.[\w-]+$/);

    await page.fill("#text", "written from the sandboxed page");
    await page.click("button[type=submit]");
    await expect
      .poll(() => page.locator("#notes li").allTextContents(), { timeout: 10_000 })
      .toContain("written from the sandboxed page");
    expect(await page.locator("#status").textContent()).toBe("");

    // The page's origin is opaque: it has no cookie and its calls to the owner's API fail.
    const attempts = await page.evaluate(async () => {
      const outcome = async (work: () => Promise<Response>) => {
        try {
          return String((await work()).status);
        } catch {
          return "blocked";
        }
      };
      return {
        origin: window.origin,
        cookie: (() => {
          try {
            return document.cookie;
          } catch (error) {
            return (error as Error).name;
          }
        })(),
        sessions: await outcome(() => fetch("/api/auth/sessions", { credentials: "include" })),
        events: await outcome(() => fetch("/api/security/events")),
        signOut: await outcome(() =>
          fetch("/api/auth/signout-everywhere", {
            method: "POST",
            mode: "no-cors",
            credentials: "include",
            body: "{}",
          }),
        ),
      };
    });
    expect(attempts.origin).toBe("null");
    expect(attempts.cookie).toBe("SecurityError");
    expect(attempts.sessions).toBe("blocked");
    expect(attempts.events).toBe("blocked");
    expect(problems).toEqual([]);

    // The owner's session survived the page's sign-out attempt, and the security log shows nothing ran as the owner.
    const owner = await context.request.get(`${gw.base}/api/auth/sessions`);
    expect(owner.status()).toBe(200);
    const refused = await (await gw.fetch("/api/security/events?kind=origin_not_allowed")).json();
    expect(refused.events.some((e: { subject: string }) => e.subject === "POST /api/auth/signout-everywhere")).toBe(
      true,
    );
    await context.close();
  });
});
