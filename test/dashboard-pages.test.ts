// Every page of the dashboard in a real Chromium against a really started gateway, signed
// out and signed in, checked by axe-core (no serious or critical violation) and saved as a
// screenshot under test-artifacts/screenshots/. Also: the pages are addresses (back and
// forward move between them), the skip link and the navigation work from the keyboard, the
// App detail page shows the live log and what was consented to, a failed navigation is a
// page of its own, and hostile device text is shown as text.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchChromium } from "./helpers/browser";
import { seriousViolations } from "./helpers/axe";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { removeHome, repoRoot, runCli, startGateway, type RunningGateway } from "./helpers/gateway";
import { install, waitForRow } from "./helpers/backends";

const SHOTS = join(repoRoot, "test-artifacts", "screenshots");
const HOSTILE = `<img src=x onerror="window.__pwned=1"><b>bold</b>`;

describe("every dashboard page, for accessibility", () => {
  let gw: RunningGateway;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    [gw, browser] = await Promise.all([startGateway(), launchChromium()]);
    await install(gw.home, join(repoRoot, "apps", "fixtures", "node-notes"));
    expect((await waitForRow(gw, "node-notes", (r) => r.healthy === true, 30_000))?.healthy).toBe(true);
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    if (gw) removeHome(gw.home);
  });

  async function openPage(userAgent?: string): Promise<Page> {
    const context = await browser.newContext(userAgent ? { userAgent } : {});
    contexts.push(context);
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    page.on("pageerror", (error) => pageErrors.push(error.message));
    return page;
  }

  async function signedInPage(userAgent?: string): Promise<Page> {
    const minted = await runCli(["token", "--home", gw.home]);
    expect(minted.code, minted.stderr).toBe(0);
    const page = await openPage(userAgent);
    await page.goto(minted.stdout.trim());
    await page.locator("[data-fact=version] dd").waitFor();
    return page;
  }

  /**
   * Checks the page at a phone's width (390 px) and a laptop's (1280 px): axe, then no sideways
   * scroll, then its screenshot at each; fails on any serious or critical violation or on a page
   * wider than the window. The page's own width comes back afterwards.
   */
  async function audit(page: Page, name: string): Promise<void> {
    const before = page.viewportSize();
    try {
      for (const width of [390, 1280]) {
        await page.setViewportSize({ width, height: 844 });
        await page.screenshot({ path: join(SHOTS, `${name}-${width}.png`), fullPage: true });
        expect(await seriousViolations(page), `${name} at ${width} px`).toEqual([]);
        expect(await sidewaysOverflow(page), `${name} at ${width} px scrolls sideways`).toEqual([]);
      }
    } finally {
      if (before) await page.setViewportSize(before);
    }
  }

  /** The elements wider than the window (none when the page does not scroll sideways). */
  async function sidewaysOverflow(page: Page): Promise<string[]> {
    return page.evaluate(() => {
      const root = document.documentElement;
      if (root.scrollWidth <= root.clientWidth) return [];
      const widest: string[] = [];
      for (const node of document.querySelectorAll("body *")) {
        const box = node.getBoundingClientRect();
        if (box.right > root.clientWidth + 1 && widest.length < 5)
          widest.push(
            `${node.tagName.toLowerCase()}${node.id ? `#${node.id}` : ""}.${[...node.classList].join(".")} right=${Math.round(box.right)}`,
          );
      }
      return [`scrollWidth ${root.scrollWidth} > ${root.clientWidth}`, ...widest];
    });
  }

  it("the accessibility check itself fails a page with a serious violation", async () => {
    const page = await openPage();
    await page.setContent('<html lang="en"><body><main><img src="x.png"><button></button></main></body></html>');
    const found = await seriousViolations(page);
    expect(found.some((line) => line.startsWith("image-alt:"))).toBe(true);
    expect(found.some((line) => line.startsWith("button-name:"))).toBe(true);
  });

  it("signed out, every address shows the sign-in instructions, axe-clean, and says what the link is", async () => {
    const page = await openPage();
    for (const hash of [
      "",
      "#/apps",
      "#/apps/node-notes",
      "#/install",
      "#/inbox",
      "#/devices",
      "#/security-log",
      "#/settings",
    ]) {
      // From another document each time: a change of the hash alone would load nothing.
      await page.goto("about:blank");
      const response = await page.goto(`${gw.base}/${hash}`);
      expect(response?.status(), hash).toBe(200);
      await page.locator("section.sign-in").waitFor();
      expect(await page.locator("#apps, #devices, #app-detail, #install").count(), hash).toBe(0);
      await audit(page, `signed-out${hash.replace(/[#/]+/g, "-") || "-home"}`);
    }
    const text = await page.locator("section.sign-in").innerText();
    expect(text).toContain("not a one-time code");
    expect(text).toContain("first address that opens it");
    expect(text).toContain("personalclaw auth rotate-key");
  });

  it("a bad sign-in link, an unknown app and a disabled app are pages of their own with status and code, axe-clean", async () => {
    const out = await openPage();
    const bad = await out.goto(`${gw.base}/?token=not-a-token.at-all`);
    expect(bad?.status()).toBe(403);
    await expect(out.locator(".error-code").textContent()).resolves.toBe("session_required");
    await expect(out.locator("pre.command").textContent()).resolves.toBe("personalclaw token");
    expect(await out.evaluate(() => getComputedStyle(document.body).fontFamily)).toContain("system-ui");
    await audit(out, "error-bad-link");

    const page = await signedInPage();
    const unknown = await page.goto(`${gw.base}/apps/no-such-app/`);
    expect(unknown?.status()).toBe(404);
    await expect(page.locator(".error-code").textContent()).resolves.toBe("app_not_found");
    await audit(page, "error-unknown-app");

    const off = await gw.fetch("/api/apps/node-notes/disable", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(off.status).toBe(200);
    try {
      const disabled = await page.goto(`${gw.base}/apps/node-notes/`);
      expect(disabled?.status()).toBe(409);
      await expect(page.locator(".error-code").textContent()).resolves.toBe("app_disabled");
      await audit(page, "error-disabled-app");
      // Its one link leads to the Apps page, where Enable is.
      await page.getByRole("link", { name: "Go to the dashboard's Apps page" }).click();
      await page.locator("#apps li[data-app=node-notes]").waitFor();
    } finally {
      const on = await gw.fetch("/api/apps/node-notes/enable", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      expect(on.status).toBe(200);
    }
  });

  it("signed in, every page is reachable from the navigation, axe-clean, with its title, and back returns to the previous page", async () => {
    const page = await signedInPage();
    // The first page is Apps.
    await page.locator("#apps li[data-app=node-notes]").waitFor();
    await audit(page, "apps");
    const pages: Array<[string, string, string]> = [
      ["Install", "#install", "Install an app · PersonalClaw"],
      ["Add", "#add", "Add an MCP server · PersonalClaw"],
      ["Store", "#store", "Store · PersonalClaw"],
      ["Inbox", "#inbox", "Inbox · PersonalClaw"],
      ["Devices", "#devices table", "Devices · PersonalClaw"],
      ["Security log", "#security-log tbody tr", "Security log · PersonalClaw"],
      ["Settings", "#settings", "Settings · PersonalClaw"],
    ];
    for (const [link, ready, title] of pages) {
      await page.locator("#nav").getByRole("link", { name: link }).click();
      await page.locator(ready).first().waitFor();
      expect(await page.title()).toBe(title);
      await expect(page.locator(`#nav a[aria-current=page]`).textContent()).resolves.toContain(link);
      expect(await page.locator("main > section").count()).toBeGreaterThan(0);
      await audit(page, link.toLowerCase().replace(/ /g, "-"));
    }
    // The Install page with a review on it: every disclosure part, and the Install button.
    await page.locator("#nav").getByRole("link", { name: "Install" }).click();
    await page.getByLabel("Folder path").fill(join(repoRoot, "apps", "fixtures", "mcp-notes"));
    await page.getByRole("button", { name: "Preview" }).click();
    await page.locator("#install .review").waitFor({ timeout: 30_000 });
    await audit(page, "install-review");
    await page.goBack();
    await page.locator("#settings").waitFor();
    await page.goBack();
    await page.locator("#security-log").waitFor();
    expect(await page.locator("#settings").count()).toBe(0);
    await page.goBack();
    await page.locator("#devices table").waitFor();
    await page.goForward();
    await page.locator("#security-log").waitFor();

    await page.goto(`${gw.base}/#/no-such-page`);
    await page.getByRole("heading", { name: "No such page" }).waitFor();
    await audit(page, "not-found");
  });

  it("the App detail page shows status, the live backend log with search, what was consented to and parked data, axe-clean", async () => {
    const page = await signedInPage();
    await page.locator("#apps li[data-app=node-notes] h3 a").click();
    expect(new URL(page.url()).hash).toBe("#/apps/node-notes");
    const detail = page.locator("#app-detail[data-app=node-notes]");
    await detail.waitFor();
    // The heading starts as the name and gains the display name once the record has loaded.
    await expect.poll(() => detail.locator("h2").textContent()).toBe("Node Notes (node-notes)");
    await expect
      .poll(() => detail.locator(".log-view").textContent(), { timeout: 15_000 })
      .toContain("node-notes listening");
    await expect(detail.locator(".backend").textContent()).resolves.toMatch(/restarts?/);
    const consent = detail.locator(".review");
    await consent.waitFor();
    const digest = ((await (await gw.fetch("/api/apps/node-notes")).json()) as { consentDigest: string }).consentDigest;
    await expect(consent.locator(".digest").textContent()).resolves.toBe(digest);
    expect(await consent.locator(".review-part h4").allTextContents()).toEqual(
      expect.arrayContaining(["Permissions", "Backend", "UI"]),
    );
    await detail.getByText("No data of an earlier install of this app is parked.").waitFor();
    // Open keeps the dashboard: the app's page opens in a new tab.
    const open = detail.getByRole("link", { name: "Open node-notes (in a new tab)" });
    expect(await open.getAttribute("target")).toBe("_blank");
    const [appTab] = await Promise.all([page.context().waitForEvent("page"), open.click()]);
    await appTab.waitForLoadState();
    expect(new URL(appTab.url()).pathname).toBe("/apps/node-notes/");
    expect(new URL(page.url()).hash).toBe("#/apps/node-notes");
    await appTab.close();
    for (const control of [
      "Open node-notes (in a new tab)",
      "Disable node-notes",
      "Restart node-notes",
      "Update node-notes",
      "Uninstall node-notes",
    ])
      expect(
        await detail.getByRole(control.startsWith("Open") ? "link" : "button", { name: control }).count(),
        control,
      ).toBe(1);
    await audit(page, "app-detail");

    // Search keeps only matching lines; a search nothing matches says so.
    await detail.getByLabel("Search the log").fill("LISTENING");
    await detail.getByRole("button", { name: "Search" }).click();
    await expect
      .poll(() => detail.locator(".log-view").textContent())
      .toMatch(/^[^\n]*listening[^\n]*(\n[^\n]*listening[^\n]*)*$/);
    await detail.getByLabel("Search the log").fill("no line holds this");
    await detail.getByRole("button", { name: "Search" }).click();
    await expect
      .poll(() => detail.locator("[role=status]").first().textContent())
      .toContain("No line of the backend log holds");

    // Live: a restart shows its new lines without a reload.
    await detail.getByLabel("Search the log").fill("");
    await detail.getByRole("button", { name: "Search" }).click();
    const before = ((await detail.locator(".log-view").textContent()) ?? "").split("listening").length;
    await detail.getByRole("button", { name: "Restart node-notes" }).click();
    await detail.getByText("Node Notes's backend was restarted.").waitFor({ timeout: 30_000 });
    await expect
      .poll(async () => ((await detail.locator(".log-view").textContent()) ?? "").split("listening").length, {
        timeout: 15_000,
      })
      .toBeGreaterThan(before);
    // The restart's SIGTERM is the owner's doing: its exit reads as a stop on request, not a crash.
    await expect
      .poll(() => detail.locator(".backend").textContent(), { timeout: 15_000 })
      .toContain("last stopped on request");
    expect(await detail.locator(".backend").textContent()).not.toContain("last exit");

    await page.goto(`${gw.base}/#/apps/not-installed-here`);
    await page.getByText("No app named not-installed-here is installed.").waitFor();
    await audit(page, "app-detail-missing");
  });

  it("from the keyboard: the skip link is the first stop and moves focus to the content, focus is visible, and Enter follows the navigation", async () => {
    const page = await signedInPage();
    await page.locator("#apps li[data-app=node-notes]").waitFor();
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.className)).toBe("skip-link");
    expect(await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle)).toBe("solid");
    await page.keyboard.press("Enter");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("app");
    expect(new URL(page.url()).hash).toBe("");
    await page.locator("#nav").getByRole("link", { name: "Devices" }).focus();
    await page.keyboard.press("Enter");
    await page.locator("#devices table").waitFor();
    // Focus moves to the new page's heading, so a screen reader announces where it is.
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent ?? "")).toContain("Devices");
  });

  it("Devices shows browser and system, first address and a name the owner gives; hostile text stays text", async () => {
    const page = await signedInPage(
      `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 ${HOSTILE}`,
    );
    await page.goto(`${gw.base}/#/devices`);
    const current = page.locator("#devices tr.current");
    await current.waitFor();
    await expect(current.locator(".session-name").textContent()).resolves.toBe("Chrome 126 on Linux");
    await expect(current.locator("td").nth(1).textContent()).resolves.toBe("127.0.0.1");
    await expect(current.locator(".user-agent").textContent()).resolves.toContain(HOSTILE);

    await current.getByRole("button", { name: "Rename Chrome 126 on Linux" }).click();
    await current.getByLabel("Device name").fill("laptop\u202egnp.exe");
    await current.getByRole("button", { name: "Save" }).click();
    await expect(page.locator("#devices .notice-error .error-code").textContent()).resolves.toBe("device_name_invalid");
    await current.getByLabel("Device name").fill(HOSTILE);
    await current.getByRole("button", { name: "Save" }).click();
    await expect.poll(() => page.locator("#devices tr.current .session-name").textContent()).toBe(HOSTILE);
    expect(await page.locator("#devices img, #devices b").count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    await audit(page, "devices-named");
    expect(pageErrors).toEqual([]);
  });
});
