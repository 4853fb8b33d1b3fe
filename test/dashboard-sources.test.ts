// The dashboard's Add and Store pages in a real Chromium against a really started gateway (issue
// 36): the Store lists a configured MCP Registry stand-in's entries with their provenance (never
// "official" for a registry that is not the official one's URL, whatever its entries say), the
// Add page takes npm:@modelcontextprotocol/server-memory from the local npm stand-in through the
// ordinary review to installed, and the app's page says when its source has a newer version.
// Stand-ins on loopback addresses the owner configured; axe checks each page.
//
// Homes live under /var/tmp, not /tmp: the sandbox gives every child a private /tmp.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { launchChromium } from "./helpers/browser";
import { seriousViolations } from "./helpers/axe";
import { runCli, startGateway, type RunningGateway } from "./helpers/gateway";
import { NPM_FIXTURES, startNpmRegistry, tarballFile, type NpmRegistryStandIn } from "./helpers/npm-registry";
import { registryFixture, startMcpRegistry, type McpRegistryStandIn } from "./helpers/mcp-registry";

const PACKAGE = "@modelcontextprotocol/server-memory";
const SPEC = `npm:${PACKAGE}@2025.8.4`;
const ENTRY = "io.github.modelcontextprotocol/server-memory";
const APP = "server-memory";

describe("the Add and Store pages", () => {
  let root: string;
  let ownerHome: string;
  let home: string;
  let gw: RunningGateway;
  let browser: Browser;
  let page: Page;
  let npm: NpmRegistryStandIn;
  let mcp: McpRegistryStandIn;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    root = mkdtempSync("/var/tmp/pc-dashboard-sources-");
    ownerHome = join(root, "owner");
    home = join(ownerHome, ".personalclaw");
    mkdirSync(home, { recursive: true });
    npm = await startNpmRegistry();
    // The entry claims the official registry's blessing in its _meta; this registry is not the official one.
    mcp = await startMcpRegistry({ entries: [registryFixture("server-memory.json")] });
    writeFileSync(
      join(home, "config.json"),
      JSON.stringify({ install: { npm_registry: npm.url, mcp_registries: [mcp.url] } }),
    );
    [gw, browser] = await Promise.all([startGateway({ home, env: { HOME: ownerHome } }), launchChromium()]);
    const minted = await runCli(["token", "--home", home], { HOME: ownerHome });
    expect(minted.code, minted.stderr).toBe(0);
    page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(20_000);
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await page.goto(minted.stdout.trim());
    await page.locator("[data-fact=version] dd").waitFor();
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    await npm?.close();
    await mcp?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("the Store lists the configured registry's entries with their provenance, and Add takes an entry to the Add page", async () => {
    await page.goto(`${gw.base}/#/store`);
    const entry = page.locator(`.store-entry[data-entry="${ENTRY}"]`);
    await entry.waitFor();
    await expect(entry.locator("[data-provenance]").getAttribute("data-provenance")).resolves.toBe("configured");
    expect(await entry.locator("[data-provenance]").textContent()).toBe(`from ${mcp.url}`);
    expect(await page.locator(".store-provenance").textContent()).toContain("not the official MCP Registry");
    expect(await page.locator('#store [data-provenance="official"]').count()).toBe(0);
    expect(await entry.textContent()).toContain(`npm ${PACKAGE}@2025.8.4`);
    expect(await entry.locator("[data-installed]").count()).toBe(0);
    expect(await seriousViolations(page), "store").toEqual([]);
    await entry.getByRole("button", { name: `Add ${ENTRY}` }).click();
    await page.waitForURL(/#\/add$/);
    expect(await page.locator("#add-spec").inputValue()).toBe(`registry:${ENTRY}`);
  });

  it("the Add page takes npm:…server-memory from the local npm source through the review to installed", async () => {
    await page.goto(`${gw.base}/#/add`);
    await page.locator("#add-spec").fill(SPEC);
    await page.locator("#add-env").fill("MEMORY_FILE_PATH=${DATA}/memory.jsonl");
    await page.getByRole("button", { name: "Review" }).click();
    const review = page.locator("#add .review");
    await review.waitFor({ timeout: 120_000 });
    const source = review.locator('[data-part="package-source"]');
    expect(await source.textContent()).toContain(`${SPEC} from ${npm.url}`);
    expect(await source.textContent()).toMatch(/15 npm packages pinned by sha512 integrity/);
    // The summary the terminal's review opens the source with, in the same words (review-words.js).
    const summary = source.locator(".source-summary");
    expect(await summary.textContent()).toContain(`npm package ${PACKAGE} 2025.8.4`);
    expect(await summary.textContent()).toContain(`the npm scope @modelcontextprotocol, as ${npm.url} serves it`);
    expect(await summary.textContent()).toContain("Signaturenone: this kind of source carries no signature");
    expect(await review.textContent()).toContain("MEMORY_FILE_PATH");
    expect(existsSync(join(home, "apps", APP))).toBe(false);
    expect(await seriousViolations(page), "add review").toEqual([]);
    await page.locator("#add").getByRole("button", { name: "Install", exact: true }).click();
    await page.locator("#add .notice-info", { hasText: `Installed ${APP}.` }).waitFor({ timeout: 180_000 });
    expect(existsSync(join(home, "apps", APP, "node_modules", PACKAGE, "package.json"))).toBe(true);
    const row = await (await gw.fetch(`/api/apps/${APP}`)).json();
    expect(row.version).toBe("2025.8.4");
    // The install consented to the digest the review showed.
    const consent = await (await gw.fetch(`/api/apps/${APP}/consent`)).json();
    expect(await review.count()).toBe(0);
    expect(consent.review.npmClosure.source).toBe(SPEC);
  }, 300_000);

  it("the Store marks the installed entry, and the app's page says an update is available once its source has one", async () => {
    await page.goto(`${gw.base}/#/store`);
    await page.reload();
    const marked = page.locator(`.store-entry[data-entry="${ENTRY}"] [data-installed="${APP}"]`);
    await marked.waitFor();
    expect(await marked.textContent()).toBe(`installed as ${APP} 2025.8.4`);

    const packument = JSON.parse(
      readFileSync(join(NPM_FIXTURES, "packuments", "@modelcontextprotocol__server-memory.json"), "utf8"),
    );
    const { dist: _dist, ...meta } = packument.versions["2025.8.4"];
    npm.publish(
      { ...meta, version: "2025.8.6" },
      readFileSync(join(NPM_FIXTURES, "tarballs", tarballFile(PACKAGE, "2025.8.4"))),
    );
    await page.goto(`${gw.base}/#/apps/${APP}`);
    await page.getByRole("button", { name: "Check for a newer version" }).click();
    const notice = page.locator("[data-update-available]");
    await notice.waitFor();
    expect(await notice.textContent()).toContain("Update available: 2025.8.4 → 2025.8.6");
    expect(await notice.textContent()).toContain(`personalclaw apps update ${APP} npm:${PACKAGE}@2025.8.6`);
    expect(await seriousViolations(page), "app page").toEqual([]);
    await page.getByRole("button", { name: "Review the update to 2025.8.6" }).click();
    await page.waitForURL(/#\/add$/);
    expect(await page.locator("#add-spec").inputValue()).toBe(`npm:${PACKAGE}@2025.8.6`);
    expect(await page.locator("#add-env").inputValue()).toBe("MEMORY_FILE_PATH=${DATA}/memory.jsonl");
    // Asking installed nothing.
    expect((await (await gw.fetch(`/api/apps/${APP}`)).json()).version).toBe("2025.8.4");
    expect(pageErrors).toEqual([]);
  }, 120_000);
});
