// The Folders part of an app's page, in a real Chromium against a real gateway: the owner types
// a folder's path (a browser cannot pick a folder on the gateway's machine), grants it, sees the
// grant, takes it back; a refused path shows its code; the page stays axe-clean throughout.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { launchChromium } from "./helpers/browser";
import { seriousViolations } from "./helpers/axe";
import { removeHome, repoRoot, runCli, startGateway, type RunningGateway } from "./helpers/gateway";
import { install, waitForRow } from "./helpers/backends";

const APP = "folder-reader";

describe("the Folders part of an app's page", () => {
  let gw: RunningGateway;
  let browser: Browser;
  let owner: string;
  let docs: string;

  beforeAll(async () => {
    owner = mkdtempSync(join("/var/tmp", "pc-owner-ui-"));
    docs = join(owner, "Documents");
    mkdirSync(docs);
    chmodSync(docs, 0o755);
    symlinkSync(docs, join(owner, "docs-link"));
    [gw, browser] = await Promise.all([startGateway(), launchChromium()]);
    await install(gw.home, join(repoRoot, "test", "fixtures", "backend-apps", APP));
    expect((await waitForRow(gw, APP, (r) => r.healthy === true, 30_000))?.healthy).toBe(true);
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    if (gw) removeHome(gw.home);
    rmSync(owner, { recursive: true, force: true });
  });

  async function signedInPage(): Promise<Page> {
    const minted = await runCli(["token", "--home", gw.home]);
    expect(minted.code, minted.stderr).toBe(0);
    const page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(minted.stdout.trim());
    await page.locator("[data-fact=version] dd").waitFor();
    await page.goto(`${gw.base}/#/apps/${APP}`);
    return page;
  }

  it("grants a typed folder read-only, shows it, takes it back, and shows a refusal's code, axe-clean", async () => {
    const page = await signedInPage();
    const part = page.locator("#app-folders");
    const documents = part.locator("li[data-need=documents]");
    await documents.getByText("Not granted").waitFor();
    // Only a need that allows read-write offers it.
    expect(await documents.getByLabel("read-write").count()).toBe(0);
    expect(await part.locator("li[data-need=outbox]").getByLabel("read-write").count()).toBe(1);
    expect(await seriousViolations(page)).toEqual([]);

    await documents.getByLabel("Folder for documents").fill(join(owner, "docs-link"));
    await documents.getByRole("button", { name: "Grant" }).click();
    await expect.poll(() => part.locator(".error-code").textContent()).toBe("folder_path_link");

    await documents.getByLabel("Folder for documents").fill(docs);
    await documents.getByRole("button", { name: "Grant" }).click();
    await expect.poll(() => documents.locator(".folder-grant").textContent()).toContain(`Granted: ${docs}, read-only.`);
    const listed = await (await gw.fetch(`/api/apps/${APP}/folders`)).json();
    expect(listed.folders[0].grant).toMatchObject({ path: docs, access: "read" });
    expect(await seriousViolations(page)).toEqual([]);

    await documents.getByRole("button", { name: "Take back the folder granted for documents" }).click();
    await documents.getByText("Not granted").waitFor();
    const after = await (await gw.fetch(`/api/apps/${APP}/folders`)).json();
    expect(after.folders[0].grant).toBeNull();
    expect(await seriousViolations(page)).toEqual([]);
  });
});
