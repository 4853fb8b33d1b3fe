// One manifest using every field, reviewed by a really started gateway, read the way the owner
// reads it: the terminal review `apps install` prints before it asks for consent (the one
// `--yes` consents to) and the dashboard's review in a real Chromium. Every permission the
// review carries, which the consent digest covers, is in both, under the same label, with its
// values; the event grants read as what the app hears and receives, never as what it sends.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { launchChromium } from "./helpers/browser";
import { makeHome, removeHome, runCli, startGateway, type RunningGateway } from "./helpers/gateway";
import { FINDINGS_WORDS, GRANT_WORDS } from "../kernel/contracts/review-words";
import { InstallReviewSchema, type InstallReview } from "../kernel/contracts/install-review";

const MANIFEST = {
  name: "every-grant",
  version: "1.2.3",
  displayName: "Every Grant",
  description: "Declares every field a manifest has.",
  backend: { command: "node", args: ["server.mjs"], entryPoint: "server.mjs", healthCheck: "/health" },
  ui: { entry: "ui/index.html", pages: [{ entryPoint: "ui/more.html", title: "More" }] },
  permissions: {
    api: ["/api/status", "/api/config"],
    config: { read: ["proxy.response_timeout_s"], write: ["updates.auto"] },
    events: ["app.installed", "backend.health_changed"],
    eventSubscriptions: ["app.uninstalled"],
    mcpTools: ["search-the-web"],
    memory: true,
    cron: true,
    storage: true,
    agent: "read",
    appMessaging: ["welcome", "notes-*"],
    approvals: true,
    network: ["api.example.com", "files.example.org:8443"],
    folders: [{ name: "notes", why: "indexes your notes", access: "read-write" }],
  },
  crons: [{ name: "tick", schedule: "0 3 * * *", route: "/jobs/tick", timeoutSeconds: 10 }],
  mcpServers: { notes: { command: "node", args: ["mcp.mjs"], env: { NOTES_MODE: "plain" } } },
  dependencies: { npmPackages: ["left-pad@1.3.0"] },
  setup: { onInstall: { command: "node", args: ["setup.mjs"] }, onUninstall: { command: "node", args: ["bye.mjs"] } },
  launches: [{ program: "git", why: "clones notes", hosts: ["github.com"] }],
  writes: [{ path: "~/.cache/every-grant", why: "its cache" }],
  requires: [{ name: "Node.js 20", why: "runs the backend", how: "PersonalClaw's own node is enough" }],
  secrets: [{ name: "NOTES_TOKEN", why: "reads the notes service" }],
  minPersonalClawVersion: "0.0.1",
  quality: { tested: true },
};

function writeBundle(dir: string): void {
  const files: Record<string, string> = {
    "app.json": JSON.stringify(MANIFEST, null, 2),
    "server.mjs": "export {};\n",
    "mcp.mjs": "export {};\n",
    "setup.mjs": "export {};\n",
    "bye.mjs": "export {};\n",
    "ui/index.html": "<!doctype html><title>every grant</title>\n",
    "ui/more.html": "<!doctype html><title>more</title>\n",
  };
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(dir, rel, ".."), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
}

/** The values a grant shows, as text, for a granted permission of the review. */
function shownValues(kind: string, value: unknown): string[] {
  if (kind === "flag") return value === true ? ["yes"] : [];
  if (kind === "tier") return [String(value)];
  if (kind === "hosts") return (value as { hosts: string[] }).hosts;
  return value as string[];
}

describe("the terminal and the dashboard review of one manifest using every field", () => {
  let gw: RunningGateway;
  let browser: Browser;
  const bundle = join(makeHome("pc-every-grant-"), "every-grant");
  let review: InstallReview;

  beforeAll(async () => {
    writeBundle(bundle);
    [gw, browser] = await Promise.all([
      startGateway({ env: { PERSONALCLAW_SKIP_APP_BACKENDS: "1" } }),
      launchChromium(),
    ]);
    const previewed = await gw.fetch("/api/apps/preview", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ source: bundle }),
    });
    expect(previewed.status).toBe(200);
    review = InstallReviewSchema.parse((await previewed.json()).review);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    if (gw) removeHome(gw.home);
    removeHome(join(bundle, ".."));
  });

  it("grants every permission the review carries, so the test covers each", () => {
    for (const { field, kind } of GRANT_WORDS)
      expect(shownValues(kind, review.permissions[field]).length, field).toBeGreaterThan(0);
    expect(GRANT_WORDS.map((g) => g.field)).toEqual(Object.keys(InstallReviewSchema.shape.permissions.shape));
  });

  it("shows every grant in the review `apps install` asks consent for, under its label, with its values", async () => {
    const asked = await runCli(["apps", "install", bundle, "--home", gw.home]);
    expect(asked.code, asked.stderr).toBe(1);
    expect(asked.stderr).toContain("consent_required");
    const lines = asked.stderr.split("\n");
    for (const { field, label, kind } of GRANT_WORDS) {
      const line = lines.find((l) => l.startsWith(`  ${label}: `));
      expect(line, `${field} (${label})`).toBeDefined();
      for (const value of shownValues(kind, review.permissions[field])) expect(line, field).toContain(value);
    }
    expect(asked.stderr).toContain("install scripts off (--ignore-scripts)");
    expect(asked.stderr).not.toMatch(/runs these packages' install scripts|test files nothing loads/);
    expect(asked.stderr).toMatch(/Hears on its live socket: app\.installed, backend\.health_changed/);
  });

  async function dashboardReview(): Promise<Page> {
    const minted = await runCli(["token", "--home", gw.home]);
    expect(minted.code, minted.stderr).toBe(0);
    const page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(minted.stdout.trim());
    await page.locator("[data-fact=version] dd").waitFor();
    await page.goto(`${gw.base}/#/install`);
    await page.getByLabel("Folder path").fill(bundle);
    await page.getByRole("button", { name: "Preview" }).click();
    await page.locator("#install .review").waitFor({ timeout: 30_000 });
    return page;
  }

  it("shows every grant in the dashboard's review under the same label, with its values", async () => {
    const page = await dashboardReview();
    const terms = await page.locator("#install .review dl.terms > div").evaluateAll((rows) =>
      rows.map((row) => ({
        label: row.querySelector("dt")?.textContent ?? "",
        value: row.querySelector("dd")?.textContent ?? "",
      })),
    );
    for (const { field, label, kind } of GRANT_WORDS) {
      const term = terms.find((t) => t.label === label);
      expect(term, `${field} (${label})`).toBeDefined();
      for (const value of shownValues(kind, review.permissions[field])) expect(term!.value, field).toContain(value);
    }
    const text = await page.locator("#install .review").innerText();
    expect(text).not.toMatch(/Emits events|may publish/i);
    expect(text).toContain("install scripts off (--ignore-scripts)");
    await page.context().close();
  });

  it("names the findings in files the app does not run the same way in both, never as test files alone", () => {
    expect(FINDINGS_WORDS.tests).toMatch(/vendored/);
    expect(FINDINGS_WORDS.tests).not.toMatch(/^in test files/i);
  });
});
