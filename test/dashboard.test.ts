// The dashboard in a real Chromium against a really started gateway: the sign-in
// instructions without a session, the sign-in link exchanged for an HttpOnly cookie, the
// status header, devices and sign-out, the security log and its verification, install with
// its step-by-step progress, uninstall, an app's MCP servers and jobs, and a page that runs under its CSP without a
// violation or a console error.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchChromium } from "./helpers/browser";
import { appendFileSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeHome, removeHome, repoRoot, runCli, startGateway, type RunningGateway } from "./helpers/gateway";

// Chromium logs every non-2xx fetch as a console error of its own. Those answers are the API
// speaking as designed and the page shows each one: 403 is how a page learns it is not
// signed in (the cookie is HttpOnly, so it must ask), 409 asks for consent again, 422 is a
// refused preview. They are allowed only for /api/ and only when the answer was the error
// envelope (checked in `problems.badErrorAnswers`); anything else the page logs fails.
const BROWSER_NETWORK_LOG =
  /^error: Failed to load resource: the server responded with a status of 4\d\d \([^)]*\) @ http:\/\/127\.0\.0\.1:\d+\/api\//;

interface PageProblems {
  console: string[];
  pageErrors: string[];
  badErrorAnswers: string[];
}

describe("the dashboard in Chromium", () => {
  let gw: RunningGateway;
  let browser: Browser;
  /** A copy of the node-notes fixture the install test may change between preview and install. */
  const appFolder = join(makeHome("pc-dashboard-app-"), "node-notes");
  const contexts: BrowserContext[] = [];
  /** Every console error/warning and uncaught error of every page this file opens. */
  const problems: PageProblems = { console: [], pageErrors: [], badErrorAnswers: [] };

  beforeAll(async () => {
    [gw, browser] = await Promise.all([startGateway(), launchChromium()]);
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    if (gw) removeHome(gw.home);
    removeHome(join(appFolder, ".."));
  });

  async function openPage(): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext();
    contexts.push(context);
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    // A CSP violation fires this event in the page; record it where the test can read it.
    await page.addInitScript(() => {
      (window as unknown as { __cspViolations: string[] }).__cspViolations = [];
      document.addEventListener("securitypolicyviolation", (e) => {
        (window as unknown as { __cspViolations: string[] }).__cspViolations.push(
          `${e.violatedDirective} ${e.blockedURI}`,
        );
      });
    });
    page.on("console", (message) => {
      if (message.type() === "error" || message.type() === "warning")
        problems.console.push(`${message.type()}: ${message.text()} @ ${message.location().url}`);
    });
    page.on("pageerror", (error) => problems.pageErrors.push(error.message));
    page.on("response", async (response) => {
      if (response.status() < 400 || !new URL(response.url()).pathname.startsWith("/api/")) return;
      // A body the browser no longer holds (its page was signed out elsewhere or closed while the
      // answer was read) cannot be judged either way; every body it still holds is.
      const text = await response.text().catch(() => undefined);
      if (text === undefined) return;
      let body: { error?: { code?: unknown; message?: unknown } } | null;
      try {
        body = JSON.parse(text);
      } catch {
        body = null;
      }
      if (typeof body?.error?.code !== "string" || typeof body?.error?.message !== "string")
        problems.badErrorAnswers.push(`${response.status()} ${response.url()}`);
    });
    return { context, page };
  }

  async function cspViolations(page: Page): Promise<string[]> {
    return page.evaluate(() => (window as unknown as { __cspViolations: string[] }).__cspViolations);
  }

  /** A page signed in through a fresh `personalclaw token` link. */
  async function signedInPage(): Promise<{ context: BrowserContext; page: Page }> {
    const minted = await runCli(["token", "--home", gw.home]);
    expect(minted.code, minted.stderr).toBe(0);
    const opened = await openPage();
    await opened.page.goto(minted.stdout.trim());
    await opened.page.locator("[data-fact=version] dd").waitFor();
    return opened;
  }

  /** Follows the navigation link to a page of the dashboard (each page has its own #/ address). */
  async function show(page: Page, link: string): Promise<void> {
    await page.locator("#nav").getByRole("link", { name: link }).click();
  }

  it("without a sign-in shows how to get a link (personalclaw token) and no API data", async () => {
    const { page } = await openPage();
    const response = await page.goto(gw.base + "/");
    expect(response?.status()).toBe(200);
    expect(response?.headers()["content-security-policy"]).toContain("script-src 'self'");
    const signIn = page.locator("section.sign-in");
    await signIn.waitFor();
    await expect(signIn.locator("pre.command").textContent()).resolves.toBe("personalclaw token");
    expect(await page.locator("input[type=password]").count()).toBe(0);
    expect(await page.locator("#status").isHidden()).toBe(true);
    expect(await page.locator("#apps, #devices, #security-log, [data-fact]").count()).toBe(0);
    const text = await page.locator("body").innerText();
    expect(text).not.toContain("local_token");
    expect(text).not.toContain("0.1.0");
  });

  it("opening the startup link signs in: no token in the address bar, an HttpOnly cookie, and the status header", async () => {
    const { context, page } = await openPage();
    await page.goto(gw.url);
    await page.locator("[data-fact=version] dd").waitFor();
    expect(page.url()).not.toContain("token=");
    expect(page.url()).toBe(`${gw.base}/`);
    const cookies = await context.cookies();
    const cookie = cookies.find((c) => c.name === `pc_token_${gw.port}`);
    expect(cookie).toBeDefined();
    expect(cookie!.httpOnly).toBe(true);
    expect(await page.evaluate(() => document.cookie)).not.toContain("pc_token_");
    const status = await (await gw.fetch("/api/status")).json();
    await expect(page.locator("[data-fact=version] dd").textContent()).resolves.toBe(status.version);
    await expect(page.locator("[data-fact=auth-mode] dd").textContent()).resolves.toBe("local_token");
    await expect(page.locator("[data-fact=uptime] dd").textContent()).resolves.toMatch(/^\d+[dhms]/);
    await expect(page.locator("[data-fact=apps-installed] dd").textContent()).resolves.toMatch(/^(\d+|unknown)$/);
    // The pages load and nothing on them shows an error.
    await show(page, "Devices");
    await page.locator("#devices table").waitFor();
    await show(page, "Security log");
    await page.locator("#security-log tbody tr").first().waitFor();
    await page.screenshot({ path: "/tmp/dashboard.png", fullPage: true });
    expect(await page.locator(".notice-error").count()).toBe(0);
  });

  it("the security log lists a session_signed_in event, filters by kind, and Verify shows the chain ok", async () => {
    const { page } = await signedInPage();
    await show(page, "Security log");
    const log = page.locator("#security-log");
    await log.locator("tbody tr[data-kind=session_signed_in]").first().waitFor();
    await log.getByLabel("Kind").fill("session_signed_in");
    await log.getByRole("button", { name: "Filter" }).click();
    await expect
      .poll(async () => log.locator("p.muted[aria-live]").textContent())
      .toContain("of kind session_signed_in");
    const kinds = await log.locator("tbody tr").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-kind")));
    expect(kinds.length).toBeGreaterThan(0);
    expect(new Set(kinds)).toEqual(new Set(["session_signed_in"]));
    await log.getByRole("button", { name: "Verify chain" }).click();
    const result = log.locator("[data-verify]");
    await result.waitFor();
    expect(await result.getAttribute("data-verify")).toBe("ok");
    await expect(result.textContent()).resolves.toMatch(/Chain ok: \d+ events in \d+ segments? verified/);
  });

  it("shows markup in logged text as text: a hostile subject and detail neither render nor run; the detail reads as facts and the log filters by app, outcome and time", async () => {
    const hostile = `<img src=x onerror="window.__pwned=1"><b>bold</b>`;
    const secret = readFileSync(join(gw.home, ".local_secret"), "utf8").trim();
    const appended = await gw.fetch("/api/internal/sel/append", {
      method: "POST",
      owner: false,
      headers: { "x-internal-secret": secret, "x-personalclaw-work": "bridge", "content-type": "application/json" },
      body: JSON.stringify({
        kind: "dashboard_escape_probe",
        principal: "app:evil",
        outcome: "refused",
        subject: hostile,
        detail: { note: hostile },
      }),
    });
    expect(appended.status).toBe(200);
    const { page } = await signedInPage();
    await show(page, "Security log");
    const row = page.locator("#security-log tbody tr[data-kind=dashboard_escape_probe]");
    await row.waitFor();
    await expect(row.locator("td").nth(5).textContent()).resolves.toBe(hostile);
    // The detail reads as named facts, not JSON.
    await expect(row.locator("td").nth(6).textContent()).resolves.toBe(`note: ${hostile}`);
    expect(await page.locator("#security-log img, #security-log b").count()).toBe(0);
    // Filters beyond the kind: the app (subject), the outcome and how recent.
    const log = page.locator("#security-log");
    await log.getByLabel("App or subject").fill(hostile);
    await log.getByLabel("Outcome").selectOption("refused");
    await log.getByLabel("From").selectOption({ label: "the last hour" });
    await log.getByRole("button", { name: "Filter" }).click();
    await expect
      .poll(async () => log.locator("p.muted[aria-live]").textContent())
      .toMatch(/^1 event about .*, refused, from the last hour, newest first\.$/);
    expect(await log.locator("tbody tr").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-kind")))).toEqual([
      "dashboard_escape_probe",
    ]);
    await log.getByLabel("Outcome").selectOption("allowed");
    await log.getByRole("button", { name: "Filter" }).click();
    await expect.poll(async () => log.locator("p.muted[aria-live]").textContent()).toMatch(/^No events about /);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
  });

  it("install from folder shows the review (requires first, network hosts enforced, digest), asks again when the folder changed, then installs and toggles the app", async () => {
    cpSync(join(repoRoot, "apps", "fixtures", "node-notes"), appFolder, { recursive: true });
    const { page } = await signedInPage();
    await show(page, "Install");
    const installing = page.locator("#install");
    await installing.getByLabel("Folder path").fill(appFolder);
    await installing.getByRole("button", { name: "Preview" }).click();
    const review = installing.locator(".review");
    await review.waitFor({ timeout: 30_000 });
    const parts = await review.locator(".review-part h4").allTextContents();
    expect(parts[0]).toBe("Needs first");
    expect(parts.indexOf("Permissions")).toBeLessThan(parts.indexOf("Backend"));
    expect(parts.slice(1)).toEqual(
      expect.arrayContaining(["Permissions", "Backend", "UI", "Hooks", "Scan findings", "Consent digest"]),
    );
    expect(parts.at(-1)).toBe("Consent digest");
    await expect(review.locator(".prerequisites li").first().textContent()).resolves.toContain("Node.js 20 or later");
    await expect(review.locator(".terms > div", { hasText: "Network" }).first().textContent()).resolves.toContain(
      "enforced",
    );
    const previewed = await (
      await gw.fetch("/api/apps/preview", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ source: appFolder }),
      })
    ).json();
    const shownDigest = await review.locator(".digest").textContent();
    expect(shownDigest).toBe(previewed.digest);

    // The folder changes after the owner read the review: Install must not install it silently.
    appendFileSync(join(appFolder, "ui", "app.js"), "\n// changed after the preview\n");
    await installing.getByRole("button", { name: "Install", exact: true }).click();
    await installing.locator(".notice-warn").waitFor({ timeout: 30_000 });
    await expect(installing.locator(".notice-error .error-code").textContent()).resolves.toBe("consent_required");
    const newDigest = await review.locator(".digest").textContent();
    expect(newDigest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(newDigest).not.toBe(shownDigest);
    const before = (await (await gw.fetch("/api/apps")).json()) as { apps: Array<{ name: string }> };
    expect(before.apps.map((a) => a.name)).not.toContain("node-notes");
    // The refused attempt's progress names the step that refused it.
    const progress = installing.locator(".install-progress");
    await expect(progress.locator("[data-step=stage]").getAttribute("data-status")).resolves.toBe("done");
    await expect(progress.locator("[data-step=consent]").getAttribute("data-status")).resolves.toBe("failed");
    await expect(progress.locator("[data-step=move_into_place]").getAttribute("data-status")).resolves.toBe("not-run");
    await expect(installing.locator(".notice-error").getAttribute("data-failed-step")).resolves.toBe("consent");

    // Record the progress rows at the moment the page first says the app is installed.
    await page.evaluate(() => {
      const w = window as unknown as { __stepsWhenListed?: string[][] };
      const observer = new MutationObserver(() => {
        if (w.__stepsWhenListed || !document.querySelector("#install a[href='#/apps/node-notes']")) return;
        w.__stepsWhenListed = [...document.querySelectorAll<HTMLElement>("#install .install-step")].map((li) => [
          li.dataset.step!,
          li.dataset.status!,
        ]);
        observer.disconnect();
      });
      observer.observe(document.getElementById("install")!, { childList: true, subtree: true });
    });
    const installRequest = page.waitForRequest(
      (r) => r.method() === "POST" && new URL(r.url()).pathname === "/api/apps",
    );
    await installing.getByRole("button", { name: "Install", exact: true }).click();
    const installId = JSON.parse((await installRequest).postData() ?? "{}").install_id as string;
    expect(installId).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    await installing.getByText("Installed node-notes.").waitFor({ timeout: 60_000 });
    const stepsWhenListed = await page.evaluate(
      () => (window as unknown as { __stepsWhenListed?: string[][] }).__stepsWhenListed,
    );
    expect(stepsWhenListed).toEqual([
      ["stage", "done"],
      ["consent", "done"],
      ["python_dependencies", "skipped"],
      ["npm_packages", "skipped"],
      ["npm_closure", "skipped"],
      ["install_hook", "skipped"],
      ["verify", "done"],
      ["move_into_place", "done"],
    ]);
    await expect(progress.locator("ol").getAttribute("aria-live")).resolves.toBe("polite");
    await progress.screenshot({ path: "/tmp/dashboard-install-progress.png" });
    // The steps shown are the gateway's own record of this install.
    const recorded = (await (await gw.fetch(`/api/apps/installs/${installId}`)).json()) as {
      steps: Array<{ step: string; status: string }>;
    };
    expect(recorded.steps.filter((s) => s.status !== "started").map((s) => s.step)).toEqual(
      stepsWhenListed!.map(([step]) => step),
    );
    // The same folder again: the page says the app is installed before any review, and points to Update.
    await installing.getByLabel("Folder path").fill(appFolder);
    await installing.getByRole("button", { name: "Preview" }).click();
    const already = installing.locator("[data-already-installed=node-notes]");
    await already.waitFor({ timeout: 30_000 });
    await expect(already.textContent()).resolves.toMatch(
      /^node-notes is already installed \(version [^)]+\): installing it again would be refused\.To install this folder as its new version, use Update on the page of node-notes/,
    );
    expect(await already.getByRole("link", { name: "the page of node-notes" }).getAttribute("href")).toBe(
      "#/apps/node-notes",
    );
    expect(await installing.locator(".review").count()).toBe(0);
    expect(await installing.getByRole("button", { name: "Install", exact: true }).count()).toBe(0);
    await show(page, "Apps");
    const item = page.locator("#apps li[data-app=node-notes]");
    await item.waitFor();
    await expect(item.locator(".app-head .badge").first().textContent()).resolves.toBe("enabled");
    await item.getByRole("button", { name: "Disable node-notes" }).click();
    await expect
      .poll(() => item.locator(".app-head .badge").first().textContent(), { timeout: 30_000 })
      .toBe("disabled");
    const listed = (await (await gw.fetch("/api/apps")).json()) as { apps: Array<{ name: string; enabled: boolean }> };
    expect(listed.apps.find((a) => a.name === "node-notes")?.enabled).toBe(false);
    await expect
      .poll(() => page.locator("[data-fact=apps-installed] dd").textContent())
      .toBe(String(listed.apps.length));
  });

  it("Restart revives the backend and counts it; Preview update never updates: an unchanged folder and one that adds a permission and a host both show what changes in words, and only Update now runs it", async () => {
    const { page } = await signedInPage();
    const apps = page.locator("#apps");
    const item = apps.locator("li[data-app=node-notes]");
    await item.waitFor();
    if ((await item.locator(".app-head .badge").first().textContent()) === "disabled") {
      await item.getByRole("button", { name: "Enable node-notes" }).click();
      await expect
        .poll(() => item.locator(".app-head .badge").first().textContent(), { timeout: 30_000 })
        .toBe("enabled");
    }
    const backendOf = async () =>
      (
        (await (await gw.fetch("/api/apps/node-notes")).json()) as {
          backend: { healthy: boolean; restarts: number; pid: number | null } | null;
        }
      ).backend;
    await expect.poll(async () => (await backendOf())?.healthy, { timeout: 30_000 }).toBe(true);
    const before = (await backendOf())!;
    await item.getByRole("button", { name: "Restart node-notes" }).click();
    await apps.getByText("Node Notes's backend was restarted.").waitFor({ timeout: 30_000 });
    const after = (await backendOf())!;
    expect(after.restarts).toBe(before.restarts + 1);
    expect(after.pid).not.toBe(before.pid);

    const digestOf = async () =>
      ((await (await gw.fetch("/api/apps/node-notes")).json()) as { consentDigest: string }).consentDigest;
    const folderField = item.getByLabel("Folder of the new version of node-notes");
    const changes = item.locator(".update-changes");

    // The folder the app was installed from, unchanged: Preview still only previews; it says
    // nothing changes, and nothing runs until "Update now".
    const pidBefore = (await backendOf())!.pid;
    await item.getByRole("button", { name: "Update node-notes" }).click();
    await folderField.fill(appFolder);
    await folderField.press("Enter");
    await changes.locator("li", { hasText: "What it gets" }).waitFor({ timeout: 30_000 });
    expect(await changes.locator("li", { hasText: "Version" }).textContent()).toMatch(/^Version: stays \S+$/);
    expect(await changes.locator("li", { hasText: "Its files" }).textContent()).toBe(
      "Its files: the same files it runs now",
    );
    // The new review is there to read, folded: the page does not repeat it open below the changes.
    expect(await item.locator(".update-preview details.update-full-review").getAttribute("open")).toBeNull();
    const focusedText = () => page.evaluate(() => document.activeElement?.textContent ?? "");
    await expect.poll(focusedText).toMatch(/^This update changes nothing/);
    // A live re-read of the list (another app disabled, then enabled again) keeps the review and
    // the owner's place in it: the moved review keeps its focus.
    const welcomeBadge = () => apps.locator("li[data-app=welcome] .app-head .badge").first().textContent();
    for (const [action, badge] of [
      ["disable", "disabled"],
      ["enable", "enabled"],
    ] as const) {
      expect(
        (
          await gw.fetch(`/api/apps/welcome/${action}`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: "{}",
          })
        ).status,
      ).toBe(200);
      await expect.poll(welcomeBadge, { timeout: 30_000 }).toBe(badge);
    }
    expect(await focusedText()).toMatch(/^This update changes nothing/);
    await page.waitForTimeout(500);
    expect((await backendOf())!.pid).toBe(pidBefore); // shown, not run
    await item.getByRole("button", { name: "Update now: node-notes" }).click();
    await apps.getByText(/^Updated node-notes to /).waitFor({ timeout: 60_000 });

    // A new permission and a new host, a new version: each change in words, and nothing happens until "Update now".
    const manifest = JSON.parse(readFileSync(join(appFolder, "app.json"), "utf8"));
    manifest.permissions.storage = manifest.permissions.storage !== true;
    manifest.permissions.network = ["api.example.com"];
    manifest.version = "0.1.1";
    writeFileSync(join(appFolder, "app.json"), JSON.stringify(manifest, null, 2));
    // Its files: 26 added (one named with a right-to-left override, which would show its name
    // reversed), one removed, app.json changed. The list is bounded and the name made visible.
    writeFileSync(join(appFolder, "aa\u202egnp.js"), "// a name that reads backwards\n");
    mkdirSync(join(appFolder, "extra"), { recursive: true });
    for (let n = 0; n < 25; n += 1)
      writeFileSync(join(appFolder, "extra", `note-${String(n).padStart(2, "0")}.txt`), `${n}\n`);
    rmSync(join(appFolder, "vendor", "app-sdk", "README.md"));
    await item.getByRole("button", { name: "Update node-notes" }).click();
    await folderField.fill(appFolder);
    await folderField.press("Enter");
    await changes.locator("li", { hasText: "Writes its own data/ folder" }).waitFor({ timeout: 30_000 });
    const added = [
      "aa\\u202egnp.js",
      ...Array.from({ length: 19 }, (_, n) => `extra/note-${String(n).padStart(2, "0")}.txt`),
    ];
    expect(await changes.locator("li", { hasText: "Its files" }).textContent()).toBe(
      `Its files: adds ${added.join(", ")} and 6 more; changes app.json; removes vendor/app-sdk/README.md`,
    );
    const lines = await changes.locator("li").allTextContents();
    expect(lines).toContain("Version: 0.1.0 → 0.1.1");
    expect(lines).toContain("Reaches hosts (enforced): adds api.example.com");
    expect(lines).toContain(`Writes its own data/ folder: ${manifest.permissions.storage ? "no → yes" : "yes → no"}`);
    expect(lines.join("\n")).not.toMatch(/[{}[\]"]/); // words, not JSON
    const consented = await digestOf();
    await page.waitForTimeout(500);
    expect(await digestOf()).toBe(consented); // shown, not yet installed
    await item.getByRole("button", { name: "Update now: node-notes" }).click();
    await expect.poll(digestOf, { timeout: 60_000 }).not.toBe(consented);
    await apps.getByText(/^Updated node-notes to /).waitFor({ timeout: 60_000 });
    expect(await cspViolations(page)).toEqual([]);
  });

  it("Uninstall asks first with focus on Cancel, sends {} unless 'Also delete its data' is ticked, keeps the data and says where, and a native app offers no Uninstall", async () => {
    const { page } = await signedInPage();
    const apps = page.locator("#apps");
    const item = apps.locator("li[data-app=node-notes]");
    await item.waitFor();
    const welcome = apps.locator("li[data-app=welcome]");
    await welcome.waitFor();
    expect(await welcome.getByRole("button", { name: /uninstall/i }).count()).toBe(0);
    expect(await item.getByRole("button", { name: "Uninstall node-notes" }).count()).toBe(1);

    // The first press only asks; Cancel puts the button back and nothing is removed.
    await item.getByRole("button", { name: "Uninstall node-notes" }).click();
    await item.getByRole("button", { name: "Cancel uninstalling node-notes" }).click();
    await item.getByRole("button", { name: "Uninstall node-notes" }).click();
    // Focus lands on Cancel, never on the button that uninstalls: a stray Enter cancels.
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.getAttribute("aria-label")))
      .toBe("Cancel uninstalling node-notes");
    expect(await item.locator(".confirm-note").textContent()).toContain("the stored secrets stay");
    const purge = item.getByLabel("Also delete its data");
    expect(await purge.isChecked()).toBe(false);
    const stillListed = (await (await gw.fetch("/api/apps")).json()) as { apps: Array<{ name: string }> };
    expect(stillListed.apps.map((a) => a.name)).toContain("node-notes");

    const deleteRequest = page.waitForRequest((r) => r.method() === "DELETE");
    await item.getByRole("button", { name: "Yes, uninstall node-notes" }).click();
    const sent = await deleteRequest;
    expect(new URL(sent.url()).pathname).toBe("/api/apps/node-notes");
    expect(sent.headers()["content-type"]).toBe("application/json");
    expect(sent.postData()).toBe("{}");
    const result = apps.locator("[data-uninstalled=node-notes]");
    await result.waitFor({ timeout: 30_000 });
    await expect(result.locator(".uninstalled-summary").textContent()).resolves.toBe(
      "Uninstalled Node Notes: data kept.",
    );
    expect(await result.textContent()).toContain("parked in the PersonalClaw home at apps/.node-notes.data");
    await item.waitFor({ state: "detached" });

    const listed = (await (await gw.fetch("/api/apps")).json()) as { apps: Array<{ name: string }> };
    expect(listed.apps.map((a) => a.name)).not.toContain("node-notes");
    expect(existsSync(join(gw.home, "apps", "node-notes"))).toBe(false);
    expect(existsSync(join(gw.home, "apps", ".node-notes.data"))).toBe(true);
    await expect
      .poll(() => page.locator("[data-fact=apps-installed] dd").textContent())
      .toBe(String(listed.apps.length));
  });

  it("while an install is pending the progress list shows the running step, and a failed install hook is named with its message and code", async () => {
    // An app whose install hook runs for a second, then fails: long enough to be seen running.
    const slowFailing = join(appFolder, "..", "slow-failing-hook");
    mkdirSync(slowFailing);
    writeFileSync(
      join(slowFailing, "app.json"),
      JSON.stringify({
        name: "slow-failing-hook",
        version: "1.0.0",
        setup: { onInstall: { command: "/bin/sh", args: ["hook.sh"] } },
      }),
    );
    writeFileSync(join(slowFailing, "hook.sh"), "sleep 1.5\necho 'no database here' >&2\nexit 3\n");
    const { page } = await signedInPage();
    await show(page, "Install");
    const installing = page.locator("#install");
    await installing.getByLabel("Folder path").fill(slowFailing);
    await installing.getByRole("button", { name: "Preview" }).click();
    await installing.locator(".review").waitFor({ timeout: 30_000 });
    let isInstallPending = true;
    const installAnswered = page
      .waitForResponse((r) => r.request().method() === "POST" && new URL(r.url()).pathname === "/api/apps", {
        timeout: 60_000,
      })
      .then((r) => {
        isInstallPending = false;
        return r;
      });
    await installing.getByRole("button", { name: "Install", exact: true }).click();
    const hookStep = installing.locator(".install-step[data-step=install_hook]");
    await expect.poll(() => hookStep.getAttribute("data-status"), { timeout: 10_000, interval: 50 }).toBe("started");
    expect(isInstallPending).toBe(true);
    await expect(installing.locator(".install-step[data-step=npm_packages]").getAttribute("data-status")).resolves.toBe(
      "skipped",
    );
    await installing.locator(".install-progress").screenshot({ path: "/tmp/dashboard-install-running.png" });

    expect((await installAnswered).status()).toBeGreaterThanOrEqual(400);
    const failure = installing.locator(".notice-error[data-failed-step]");
    await failure.waitFor();
    expect(await failure.getAttribute("data-failed-step")).toBe("install_hook");
    await expect(failure.locator("strong").textContent()).resolves.toBe("Install hook failed: ");
    await expect(failure.locator(".error-code").textContent()).resolves.toBe("install_hook_failed");
    await expect(failure.locator(".notice-message").textContent()).resolves.not.toBe("");
    await expect.poll(() => hookStep.getAttribute("data-status")).toBe("failed");
    await expect(
      installing.locator(".install-step[data-step=move_into_place]").getAttribute("data-status"),
    ).resolves.toBe("not-run");
    await installing.locator(".install-progress").screenshot({ path: "/tmp/dashboard-install-failed.png" });
    const listed = (await (await gw.fetch("/api/apps")).json()) as { apps: Array<{ name: string }> };
    expect(listed.apps.map((a) => a.name)).not.toContain("slow-failing-hook");
  });

  it("Devices lists this browser as current, and signing out everywhere returns the page to the sign-in instruction", async () => {
    const { page } = await signedInPage();
    await show(page, "Devices");
    const devices = page.locator("#devices");
    const current = devices.locator("tr.current");
    await current.waitFor();
    expect(await current.count()).toBe(1);
    await expect(current.textContent()).resolves.toContain("This browser");
    const sessions = (await page.evaluate(async () => (await fetch("/api/auth/sessions")).json())) as {
      sessions: Array<{ id: string; current: boolean }>;
    };
    const mine = sessions.sessions.find((s) => s.current);
    expect(await current.getAttribute("data-session-id")).toBe(mine!.id);
    expect(await devices.locator("tbody tr").count()).toBe(sessions.sessions.length);

    await devices.getByRole("button", { name: "Sign out everywhere" }).click();
    await devices.getByRole("button", { name: "Yes, sign out everywhere" }).click();
    await page.locator("section.sign-in").waitFor();
    await expect(page.locator("section.sign-in pre.command").textContent()).resolves.toBe("personalclaw token");
    await expect(page.locator("section.sign-in [role=status]").textContent()).resolves.toMatch(
      /^Signed out everywhere: \d+ sessions? ended\.$/,
    );
    expect(await page.locator("#status").isHidden()).toBe(true);
    expect(await page.locator("#devices").count()).toBe(0);
    // The sign-in really ended: a reload still shows the instruction, and the API refuses the cookie.
    await page.reload();
    await page.locator("section.sign-in").waitFor();
    const after = await page.evaluate(async () => (await fetch("/api/status")).status);
    expect(after).toBe(403);
  });

  it("an app's row shows its MCP servers with their state and last start, and its scheduled jobs with schedule and next fire", async () => {
    const installed = await runCli([
      "apps",
      "install",
      join(repoRoot, "apps", "fixtures", "mcp-notes"),
      "--yes",
      "--json",
      "--home",
      gw.home,
    ]);
    expect(installed.code, installed.stderr).toBe(0);
    const { page } = await signedInPage();
    const item = page.locator("#apps li[data-app=mcp-notes]");
    await item.waitFor();
    const server = item.locator('li[data-mcp="mcp-notes:notes"]');
    await expect.poll(() => server.textContent()).toContain("mcp-notes:notes (stdio) — registered · never started");
    expect(await item.getByRole("button", { name: "Turn off mcp-notes:notes" }).count()).toBe(1);
    await item.locator("details.app-jobs summary").click();
    const job = item.locator("li[data-job=tick]");
    await job.waitFor();
    const text = (await job.textContent()) ?? "";
    expect(text).toContain("tick 0 3 * * * (UTC) → POST /jobs/tick · next fire: ");
    expect(text).toMatch(/next fire: \d{4}-\d\d-\d\dT03:00:00\.000Z/);
    expect(text).toContain("Not fired yet.");
  });

  it("renders every page above under its CSP with no violation, console error or page error", async () => {
    // One more pass that touches the remaining controls: refresh buttons, an install
    // preview that the gateway refuses (its message and code shown), and sign out others.
    const { page } = await signedInPage();
    await show(page, "Install");
    await page.locator("#install-path").fill("/nonexistent/folder");
    await page.getByRole("button", { name: "Preview" }).click();
    const refusal = page.locator("#install .notice-error");
    await refusal.waitFor();
    await expect(refusal.locator(".error-code").textContent()).resolves.toMatch(/^[a-z0-9_]+$/);
    await show(page, "Devices");
    await page.locator("#devices table").waitFor();
    await page.locator("#devices").getByRole("button", { name: "Sign out all others" }).click();
    await page.locator("#devices").getByRole("button", { name: "Yes, sign out others" }).click();
    await expect.poll(() => page.locator("#devices tbody tr").count()).toBe(1);
    expect(await cspViolations(page)).toEqual([]);
    for (const context of contexts) for (const p of context.pages()) expect(await cspViolations(p)).toEqual([]);
    expect(problems.pageErrors).toEqual([]);
    expect(problems.badErrorAnswers).toEqual([]);
    expect(problems.console.filter((line) => !BROWSER_NETWORK_LOG.test(line))).toEqual([]);
  });
});
