// Approvals on the real stack: an app that declared permissions.approvals raises one; its own
// token, another app's token, the internal credential and an anonymous caller cannot answer
// it; the owner answers in Chromium through the Inbox and the app proceeds; an hour's grant
// answers the next same ask without a prompt and stops after the hour (X-Test-Now); pending
// approvals survive a restart; 25 raised leave 20 pending; the CLI lists, answers and revokes;
// and the consent protocol guards a real loosening write, writing nothing before confirm.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { launchChromium } from "./helpers/browser";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { removeHome, repoRoot, runCli, startGateway, type RunningGateway } from "./helpers/gateway";

const asker = join(repoRoot, "test", "fixtures", "backend-apps", "approval-asker");
const nodeNotes = join(repoRoot, "apps", "fixtures", "node-notes");
const HOUR = 3_600_000;
const DIGEST = `sha256:${"ab".repeat(32)}`;
const json = { "content-type": "application/json" };

async function install(gw: RunningGateway, folder: string): Promise<string> {
  const result = await runCli(["apps", "install", folder, "--yes", "--json", "--home", gw.home]);
  expect(result.code, result.stderr + result.stdout).toBe(0);
  const name = JSON.parse(result.stdout).app.name as string;
  for (let i = 0; i < 100; i++) {
    const row = await (await gw.fetch(`/api/apps/${name}`)).json();
    if (row.backend?.healthy) return name;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${name}'s backend did not become healthy`);
}

async function appTokenOf(gw: RunningGateway, name: string): Promise<string> {
  const echo = await (await gw.fetch(`/apps/${name}/api/echo`)).json();
  return echo.headers.authorization.replace(/^Bearer /, "");
}

const secretOf = (gw: RunningGateway) => readFileSync(join(gw.home, ".local_secret"), "utf8").trim();
const internal = (gw: RunningGateway, work: string) => ({
  "x-internal-secret": secretOf(gw),
  "x-personalclaw-work": work,
});

async function publish(gw: RunningGateway, text: string, now?: number, widens = false): Promise<Response> {
  return gw.fetch("/apps/approval-asker/api/publish", {
    method: "POST",
    headers: { ...json, ...(now ? { "x-test-now": String(now) } : {}) },
    body: JSON.stringify({ text, ...(widens ? { widens: true } : {}) }),
  });
}

async function approvalOf(gw: RunningGateway, id: string): Promise<any> {
  return (await (await gw.fetch(`/api/approvals/${id}`)).json()).approval;
}

async function published(gw: RunningGateway): Promise<{ published: any[]; refused: any[] }> {
  return (await gw.fetch("/apps/approval-asker/api/published")).json();
}

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function events(gw: RunningGateway, kind: string): Promise<any[]> {
  return (await (await gw.fetch(`/api/security/events?kind=${encodeURIComponent(kind)}&limit=500`)).json()).events;
}

function raiseAsInternal(gw: RunningGateway, work: string, title: string) {
  return gw.fetch("/api/approvals", {
    method: "POST",
    owner: false,
    headers: { ...json, ...internal(gw, work) },
    body: JSON.stringify({
      kind: "reminders.send",
      title,
      action: { route: "POST /reminders", target: title, arguments_digest: DIGEST },
    }),
  });
}

describe("approvals through a running gateway", () => {
  let gw: RunningGateway;
  let browser: Browser;
  let firstId: string;
  let stillPendingId: string;

  beforeAll(async () => {
    [gw, browser] = await Promise.all([startGateway(), launchChromium()]);
    await install(gw, asker);
    await install(gw, nodeNotes);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    if (gw) removeHome(gw.home);
  });

  it("shows permissions.approvals in the install review, and an app without it cannot raise", async () => {
    const preview = await runCli(["apps", "preview", asker, "--json", "--home", gw.home]);
    expect(JSON.parse(preview.stdout).review.permissions.approvals).toBe(true);
    const text = await runCli(["apps", "preview", asker, "--home", gw.home]);
    expect(text.stdout).toContain("  Asks you questions in the Inbox: yes\n");
    const refused = await gw.fetch("/api/approvals", {
      method: "POST",
      headers: { ...json, authorization: `Bearer ${await appTokenOf(gw, "node-notes")}` },
      body: JSON.stringify({
        kind: "notes.publish",
        title: "x",
        action: { route: "POST /x", target: "x", arguments_digest: DIGEST },
      }),
    });
    expect(refused.status).toBe(403);
    expect((await refused.json()).error.code).toBe("approvals_not_declared");
  });

  it("the fixture raises; its own token, another app's token, the internal credential and an anonymous caller cannot answer", async () => {
    const raised = await publish(gw, "first note");
    expect(raised.status).toBe(202);
    const approval = (await raised.json()).approval;
    firstId = approval.id;
    expect(approval).toMatchObject({
      asked_by: "app:approval-asker",
      kind: "notes.publish",
      state: "pending",
      scopes: ["once", "1h", "always"],
    });
    expect(approval.action.target).toBe("first note");

    const tries: Array<[string, Record<string, string>, string]> = [
      ["its own token", { authorization: `Bearer ${await appTokenOf(gw, "approval-asker")}` }, "app:approval-asker"],
      ["another app's token", { authorization: `Bearer ${await appTokenOf(gw, "node-notes")}` }, "app:node-notes"],
      ["the internal credential", internal(gw, "tool:reminders"), "internal:tool:reminders"],
      ["an anonymous caller", {}, "anonymous"],
    ];
    for (const [who, headers, principal] of tries) {
      for (const action of ["approve", "deny"]) {
        if (action === "deny" && principal !== "anonymous") continue;
        const answer = await gw.fetch(`/api/approvals/${firstId}/${action}`, {
          method: "POST",
          owner: false,
          headers: { ...json, ...headers },
          body: action === "approve" ? '{"scope":"once"}' : "{}",
        });
        expect(answer.status, who).toBe(403);
        expect((await answer.json()).error.code, who).toBe("approval_owner_only");
        expect((await approvalOf(gw, firstId)).state, who).toBe("pending");
      }
      const rows = (await events(gw, "approval.answer_refused")).filter(
        (e) => e.subject === firstId && e.principal === principal,
      );
      expect(rows.length, who).toBe(1);
      expect(rows[0].detail).toMatchObject({ asked_by: "app:approval-asker", tried: principal });
    }
    expect((await published(gw)).published).toEqual([]);

    // Another app that may ask for approvals reads only its own: someone else's is not found, and logged.
    const copy = mkdtempSync(join(tmpdir(), "pc-second-asker-"));
    try {
      cpSync(asker, copy, { recursive: true });
      const manifest = JSON.parse(readFileSync(join(copy, "app.json"), "utf8"));
      writeFileSync(join(copy, "app.json"), JSON.stringify({ ...manifest, name: "second-asker" }));
      await install(gw, copy);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
    const read = await gw.fetch(`/api/approvals/${firstId}`, {
      owner: false,
      headers: { authorization: `Bearer ${await appTokenOf(gw, "second-asker")}` },
    });
    expect(read.status).toBe(404);
    expect((await read.json()).error.code).toBe("approval_not_found");
    const refusedRead = (await events(gw, "approval_read_refused")).filter((e) => e.subject === firstId);
    expect(refusedRead).toHaveLength(1);
    expect(refusedRead[0].principal).toBe("app:second-asker");
    expect((await gw.fetch("/api/apps/second-asker", { method: "DELETE", headers: json, body: "{}" })).status).toBe(
      200,
    );
  });

  it("the owner approves for an hour in Chromium through the Inbox, and the app proceeds", async () => {
    // An asker's words are text in the Inbox, never markup.
    const hostileTitle = "<img src=x onerror=\"document.title='owned'\">Delete everything";
    const hostile = await raiseAsInternal(gw, "tool:hostile", hostileTitle);
    const hostileId = (await hostile.json()).approval.id;
    const minted = await runCli(["token", "--home", gw.home]);
    expect(minted.code, minted.stderr).toBe(0);
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    await page.addInitScript(() => {
      (window as unknown as { __csp: string[] }).__csp = [];
      document.addEventListener("securitypolicyviolation", (e) =>
        (window as unknown as { __csp: string[] }).__csp.push(e.violatedDirective),
      );
    });
    // The Inbox is a page of its own; the link keeps its address through the sign-in redirect.
    await page.goto(`${minted.stdout.trim()}#/inbox`);
    const card = page.locator(`[data-approval-id="${firstId}"]`);
    await card.waitFor();
    expect(await page.locator("#inbox-count").textContent()).toBe("2");
    const hostileCard = page.locator(`[data-approval-id="${hostileId}"]`);
    expect(await hostileCard.locator(".approval-title").textContent()).toBe(hostileTitle);
    expect(await page.locator("#inbox img").count()).toBe(0);
    expect(await hostileCard.locator("button").allTextContents()).toEqual(["Approve once", "Deny"]);
    await hostileCard.locator('button[data-action="deny"]').click();
    await hostileCard.waitFor({ state: "detached" });
    expect((await approvalOf(gw, hostileId)).state).toBe("denied");
    expect(await page.locator("#inbox-count").textContent()).toBe("1");
    expect(await card.locator("[data-field=asked-by]").textContent()).toBe("app:approval-asker");
    expect(await card.locator("[data-field=action]").textContent()).toContain("POST /api/publish first note");
    expect(await card.locator("button").allTextContents()).toEqual([
      "Approve once",
      "Approve for an hour",
      "Approve always",
      "Deny",
    ]);
    await card.locator('button[data-scope="1h"]').click();
    await page.locator(`[data-approval-id="${firstId}"]`).waitFor({ state: "detached" });
    await page.locator("#inbox-grants [data-grant-id]").waitFor();
    expect(await page.locator("#inbox-count").textContent()).toBe("0");
    expect(await page.title()).toBe("Inbox · PersonalClaw");
    expect(await page.evaluate(() => (window as unknown as { __csp: string[] }).__csp)).toEqual([]);
    await context.close();

    const done = await until("the note to be published", async () =>
      (await published(gw)).published.find((p) => p.text === "first note"),
    );
    expect(done.by).toBe("you");
    const approval = await approvalOf(gw, firstId);
    expect(approval.state).toBe("approved");
    expect(approval.answer).toMatchObject({ by: "you", scope: "1h", session: expect.any(String) });
  });

  it("an hour's grant answers the next same ask at once, and stops after the hour", async () => {
    const grants = (await (await gw.fetch("/api/approvals/grants")).json()).grants;
    expect(grants).toHaveLength(1);
    expect(grants[0]).toMatchObject({ asked_by: "app:approval-asker", kind: "notes.publish", scope: "1h" });

    const soon = await publish(gw, "second note", Date.now() + 5 * 60_000);
    expect(soon.status).toBe(201);
    const granted = (await soon.json()).approval;
    expect(granted).toMatchObject({
      state: "approved",
      reason: "grant",
      answer: { by: "grant", grant_id: grants[0].id },
    });
    expect((await published(gw)).published.map((p) => p.text)).toContain("second note");
    const answered = (await events(gw, "approval.answered")).find((e) => e.subject === granted.id);
    expect(answered.detail).toMatchObject({ by: "grant", grant_id: grants[0].id });

    // The same kind, but a yes would widen the app's reach: it waits for the owner, grant or not.
    const widening = await publish(gw, "widening note", Date.now() + 5 * 60_000, true);
    expect(widening.status).toBe(202);
    const waiting = (await widening.json()).approval;
    expect(waiting).toMatchObject({ state: "pending", action: { widens_reach: true } });
    expect((await published(gw)).published.map((p) => p.text)).not.toContain("widening note");
    const deny = await gw.fetch(`/api/approvals/${waiting.id}/deny`, { method: "POST", headers: json, body: "{}" });
    expect(deny.status).toBe(200);

    const later = await publish(gw, "third note", Date.now() + HOUR + 5 * 60_000);
    expect(later.status).toBe(202);
    const asked = (await later.json()).approval;
    expect(asked.state).toBe("pending");
    stillPendingId = asked.id;
    const afterHour = await gw.fetch("/api/approvals/grants", {
      headers: { "x-test-now": String(Date.now() + HOUR + 5 * 60_000) },
    });
    expect((await afterHour.json()).grants).toEqual([]);
    expect((await published(gw)).published.map((p) => p.text)).not.toContain("third note");
  });

  it("25 raised approvals leave 20 pending; the 5 oldest expire with reason limit", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 25; i++) {
      const raised = await raiseAsInternal(gw, "tool:flood", `reminder ${i}`);
      expect(raised.status).toBe(201);
      ids.push((await raised.json()).approval.id);
    }
    const all = (await (await gw.fetch("/api/approvals")).json()).approvals.filter(
      (a: any) => a.asked_by === "internal:tool:flood",
    );
    const pending = all.filter((a: any) => a.state === "pending").map((a: any) => a.id);
    expect(pending.sort()).toEqual(ids.slice(5).sort());
    for (const id of ids.slice(0, 5))
      expect(await approvalOf(gw, id)).toMatchObject({ state: "expired", reason: "limit" });
    // Another asker's approvals are not pushed out.
    expect((await approvalOf(gw, stillPendingId)).state).toBe("pending");
  });

  it("approving always, or an action that widens an app's reach, needs owner presence", async () => {
    for (const [scopes, widens, scope] of [
      [["always"], false, "always"],
      [["once"], true, "once"],
    ] as const) {
      const raised = await gw.fetch("/api/approvals", {
        method: "POST",
        owner: false,
        headers: { ...json, ...internal(gw, "tool:presence") },
        body: JSON.stringify({
          kind: "apps.grant_host",
          title: "Reach a host",
          action: { route: "POST /grant", target: "example.org", arguments_digest: DIGEST, widens_reach: widens },
          scopes,
        }),
      });
      const id = (await raised.json()).approval.id;
      const stale = await gw.fetch(`/api/approvals/${id}/approve`, {
        method: "POST",
        headers: { ...json, "x-test-now": String(Date.now() + 11 * 60_000) },
        body: JSON.stringify({ scope }),
      });
      expect(stale.status).toBe(401);
      expect((await stale.json()).error.code).toBe("fresh_sign_in_required");
      expect((await approvalOf(gw, id)).state).toBe("pending");
      const fresh = await gw.fetch(`/api/approvals/${id}/approve`, {
        method: "POST",
        headers: json,
        body: JSON.stringify({ scope }),
      });
      expect(fresh.status).toBe(200);
    }
    const notAccepted = await raiseAsInternal(gw, "tool:presence", "once only");
    const id = (await notAccepted.json()).approval.id;
    const refused = await gw.fetch(`/api/approvals/${id}/approve`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ scope: "always" }),
    });
    expect((await refused.json()).error.code).toBe("approval_scope_not_accepted");
    await gw.fetch(`/api/approvals/${id}/deny`, { method: "POST", headers: json, body: "{}" });
    // The always grant is revoked so the CLI test below sees only the fixture's hour.
    const always = (await (await gw.fetch("/api/approvals/grants")).json()).grants.find(
      (g: any) => g.scope === "always",
    );
    expect(
      (await gw.fetch(`/api/approvals/grants/${always.id}`, { method: "DELETE", headers: json, body: "{}" })).status,
    ).toBe(200);
  });

  it("an unanswered approval expires after its ttl", async () => {
    const raised = await raiseAsInternal(gw, "tool:ttl", "ttl check");
    const id = (await raised.json()).approval.id;
    // Read by the asker: the owner's startup token (20 h) would itself expire at this clock.
    const read = await gw.fetch(`/api/approvals/${id}`, {
      owner: false,
      headers: { ...internal(gw, "tool:ttl"), "x-test-now": String(Date.now() + 25 * HOUR) },
    });
    expect((await read.json()).approval).toMatchObject({ state: "expired", reason: "ttl" });
  });

  it("the asker learns a denial by long-poll, and the CLI lists, answers, shows grants and revokes", async () => {
    const raised = await raiseAsInternal(gw, "tool:cli", "cli check");
    const id = (await raised.json()).approval.id;
    const listed = await runCli(["approvals", "list", "--json", "--home", gw.home]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).approvals.map((a: any) => a.id)).toContain(id);

    const waiting = gw.fetch(`/api/approvals/${id}?wait=30`, { owner: false, headers: internal(gw, "tool:cli") });
    const denied = await runCli(["approvals", "deny", id, "--json", "--home", gw.home]);
    expect(denied.code, denied.stderr + denied.stdout).toBe(0);
    expect(JSON.parse(denied.stdout).approval.state).toBe("denied");
    expect((await (await waiting).json()).approval.state).toBe("denied");

    const again = await runCli(["approvals", "approve", id, "--json", "--home", gw.home]);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout).error.code).toBe("approval_not_pending");

    const grants = await runCli(["approvals", "grants", "--json", "--home", gw.home]);
    const grant = JSON.parse(grants.stdout).grants.find((g: any) => g.asked_by === "app:approval-asker");
    expect(grant.scope).toBe("1h");
    const revoked = await runCli(["approvals", "revoke", grant.id, "--json", "--home", gw.home]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect((await (await gw.fetch("/api/approvals/grants")).json()).grants).toEqual([]);
    expect((await publish(gw, "fourth note")).status).toBe(202);
  });

  it("a restart keeps pending approvals", async () => {
    const before = (await (await gw.fetch("/api/approvals?state=pending")).json()).approvals
      .map((a: any) => a.id)
      .sort();
    expect(before).toContain(stillPendingId);
    const home = gw.home;
    await gw.stop();
    gw = await startGateway({ home });
    const after = (await (await gw.fetch("/api/approvals?state=pending")).json()).approvals
      .map((a: any) => a.id)
      .sort();
    expect(after).toEqual(before);
  });

  it("turning the sandbox off asks first: 400 confirmation_required, the same as a 200 question when asked, nothing written before confirm: true", async () => {
    const config = join(gw.home, "config.json");
    const existedBefore = existsSync(config);
    const before = existedBefore ? readFileSync(config, "utf8") : null;
    const write = (body: unknown, headers: Record<string, string> = {}) =>
      gw.fetch("/api/settings/sandbox", {
        method: "PATCH",
        headers: { ...json, ...headers },
        body: JSON.stringify(body),
      });

    const refused = await write({ mode: "off" });
    expect(refused.status).toBe(400);
    const refusedBody = await refused.json();
    expect(refusedBody.error).toMatchObject({
      code: "confirmation_required",
      detail: {
        field: "sandbox.mode",
        consent: "sandbox_off",
        title: "Run app backends without the sandbox",
        change: "On → Off",
      },
    });
    expect(refusedBody.error.detail.caution).toBeUndefined();

    const asked = await write({ mode: "off" }, { "x-personalclaw-consent": "ask" });
    expect(asked.status).toBe(200);
    expect(asked.headers.get("x-personalclaw-consent-asked")).toBe("1");
    expect(await asked.json()).toEqual(refusedBody);
    expect(existsSync(config) ? readFileSync(config, "utf8") : null).toBe(before);
    expect((await (await gw.fetch("/api/settings/sandbox")).json()).sandbox.mode).toBe("on");

    const raise = await write({ processes: 4096 });
    const raiseBody = await raise.json();
    expect(raiseBody.error.detail).toMatchObject({
      field: "sandbox.limits.processes",
      change: "256 → 4096",
      caution: expect.stringContaining("16×"),
    });
    expect(raiseBody.error.message).toContain(raiseBody.error.detail.caution);
    expect(existsSync(config) ? readFileSync(config, "utf8") : null).toBe(before);

    const confirmed = await write({ mode: "off", confirm: true });
    expect(confirmed.status).toBe(200);
    expect(JSON.parse(readFileSync(config, "utf8")).sandbox.mode).toBe("off");
    // Tightening asks nothing.
    const tightened = await write({ mode: "on" });
    expect(tightened.status).toBe(200);
    expect(JSON.parse(readFileSync(config, "utf8")).sandbox.mode).toBe("on");
    const rows = (await events(gw, "settings.changed")).map((e) => [e.subject, e.detail.to]);
    expect(rows).toEqual([
      ["sandbox.mode", "on"],
      ["sandbox.mode", "off"],
    ]);
  });

  it("an uninstall takes the app's approvals and grants with it: a later app of the same name inherits none", async () => {
    // The restart above started the backend again: wait for it.
    await until(
      "the asker's backend",
      async () => (await (await gw.fetch("/api/apps/approval-asker")).json()).backend?.healthy,
    );
    // A pending ask, and an hour's grant the owner gave.
    const asked = await publish(gw, "asked before the uninstall");
    const askedBody = await asked.json();
    expect(asked.status, JSON.stringify(askedBody)).toBe(202);
    expect(askedBody.approval.state).toBe("pending");
    const granted = (await (await publish(gw, "granted before the uninstall")).json()).approval;
    const approve = await gw.fetch(`/api/approvals/${granted.id}/approve`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ scope: "1h" }),
    });
    expect(approve.status).toBe(200);
    const ofAsker = async () => ({
      approvals: (await (await gw.fetch("/api/approvals")).json()).approvals.filter(
        (a: any) => a.asked_by === "app:approval-asker",
      ),
      grants: (await (await gw.fetch("/api/approvals/grants")).json()).grants.filter(
        (g: any) => g.asked_by === "app:approval-asker",
      ),
    });
    expect((await ofAsker()).grants).toHaveLength(1);

    const removed = await gw.fetch("/api/apps/approval-asker", { method: "DELETE", headers: json, body: "{}" });
    expect(removed.status, await removed.clone().text()).toBe(200);
    expect(await ofAsker()).toEqual({ approvals: [], grants: [] });
    const row = (await events(gw, "app_uninstalled")).find((e) => e.subject === "approval-asker");
    expect(row.detail.approvals_removed).toBeGreaterThanOrEqual(2);
    expect(row.detail.grants_removed).toBeGreaterThanOrEqual(1);

    // The same name installed again asks afresh: no grant answers it.
    await install(gw, asker);
    const again = await publish(gw, "asked by the new install");
    expect(again.status).toBe(202);
    expect((await again.json()).approval.state).toBe("pending");
    expect((await ofAsker()).approvals.map((a: any) => a.title)).toEqual(["Publish a note"]);
  });
});
