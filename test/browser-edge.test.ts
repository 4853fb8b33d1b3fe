// The browser edge against the real stack and real Chromium: a backend's answer never acts on
// the gateway's origin, a path or Authorization header cannot be read two ways, a cookie tossed
// from a sibling loopback port neither locks the owner out nor signs anyone in, and an app
// cannot recurse through its own proxy without bound.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchChromium } from "./helpers/browser";
import { rawRequest, removeHome, repoRoot, runCli, startGateway, type RunningGateway } from "./helpers/gateway";

const APP = "hostile-answers";
const fixture = join(repoRoot, "test", "fixtures", "backend-apps", APP);

/** A plain page server on another loopback port: the sibling origin an attacker controls. */
function siblingServer(
  handler: (path: string) => { headers?: Record<string, string | string[]>; body: string },
): Promise<{ server: Server; port: number }> {
  return new Promise((resolvePromise) => {
    const server = createServer((req, res) => {
      const answer = handler(req.url ?? "/");
      res.writeHead(200, { "content-type": "text/html", ...answer.headers });
      res.end(answer.body);
    });
    server.listen(0, "127.0.0.1", () => resolvePromise({ server, port: (server.address() as { port: number }).port }));
  });
}

async function errorCodeOf(response: { json: () => Promise<unknown> }): Promise<string | undefined> {
  return ((await response.json()) as { error?: { code?: string } }).error?.code;
}

/** The status and body of the top-level navigation `page` makes itself (so the browser marks it as the page's). */
async function navigateFromPage(page: Page, url: string): Promise<{ status: number; body: string }> {
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.url() === url || decodeURI(r.url()) === decodeURI(url), { timeout: 10_000 }),
    page.evaluate((target) => {
      window.location.href = target;
    }, url),
  ]);
  return { status: response.status(), body: await response.text() };
}

describe("the browser edge", () => {
  let gw: RunningGateway;
  let browser: Browser;
  let sibling: { server: Server; port: number };
  let appToken: string;
  const planted: { cookies: string[] } = { cookies: [] };

  beforeAll(async () => {
    [gw, browser] = await Promise.all([startGateway({ home: mkdtempSync("/var/tmp/pc-edge-") }), launchChromium()]);
    const installed = await runCli(["apps", "install", fixture, "--yes", "--json", "--home", gw.home]);
    expect(installed.code, installed.stderr + installed.stdout).toBe(0);
    for (let i = 0; i < 100; i++) {
      const row = await (await gw.fetch(`/api/apps/${APP}`)).json();
      if (row.backend?.healthy) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    // The app token the proxy hands the app's backend, as the backend reports it.
    appToken = ((await (await gw.fetch(`/apps/${APP}/api/token`)).json()).authorization as string).replace(
      /^Bearer /,
      "",
    );
    expect(appToken).toMatch(/^[\w-]+\.[\w-]+$/);
    sibling = await siblingServer((path) => {
      if (path.startsWith("/plant")) return { headers: { "set-cookie": planted.cookies }, body: "<p>planted</p>" };
      return { body: "<p>elsewhere</p>" };
    });
  }, 120_000);

  afterAll(async () => {
    sibling?.server.close();
    await browser?.close();
    await gw?.stop();
    if (gw) removeHome(gw.home);
  });

  async function ownerContext(): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext();
    const page = await context.newPage();
    const signedIn = await page.goto(gw.url);
    expect(signedIn?.status()).toBe(200);
    return { context, page };
  }

  it("an owner opening a backend's HTML answer runs its script sandboxed: no owner route, no cookie, no sign-out", async () => {
    const { context, page } = await ownerContext();
    const opened = await page.goto(`${gw.base}/apps/${APP}/api/page`);
    expect(opened?.status()).toBe(200);
    expect(opened?.headers()["content-security-policy"]).toMatch(/^sandbox allow-scripts/);
    expect(opened?.headers()["content-security-policy"]).not.toContain("allow-same-origin");
    expect(opened?.headers()["x-content-type-options"]).toBe("nosniff");
    // Neither of the page's own scripts ran: inline script is outside the policy, and the
    // sandboxed page's credential-less, cross-site fetch of its backend's script is refused.
    await page.waitForLoadState("load");
    expect(await page.title()).toBe("hostile");
    expect(await page.locator("#result").textContent()).toBe("not run");
    // Whatever script does run there (here: injected by the test) has no origin, no cookie and no owner route.
    const attempts = await page.evaluate(async () => {
      const outcome = async (work: () => Promise<Response>) => {
        try {
          const r = await work();
          return r.type === "opaque" ? "opaque" : String(r.status);
        } catch {
          return "blocked";
        }
      };
      let cookie: string;
      try {
        cookie = document.cookie;
      } catch (error) {
        cookie = (error as Error).name;
      }
      return {
        origin: window.origin,
        cookie,
        sessions: await outcome(() => fetch("/api/auth/sessions", { credentials: "include" })),
        tokenLocal: await outcome(() => fetch("/api/token/local", { credentials: "include" })),
        events: await outcome(() => fetch("/api/security/events", { credentials: "include" })),
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
    expect(attempts).toEqual({
      origin: "null",
      cookie: "SecurityError",
      sessions: "blocked",
      tokenLocal: "blocked",
      events: "blocked",
      signOut: "opaque",
    });
    const scriptRefused = await (await gw.fetch("/api/security/events?kind=origin_not_allowed")).json();
    expect(scriptRefused.events.some((e: { subject: string }) => e.subject === `GET /apps/${APP}/api/probe.js`)).toBe(
      true,
    );
    // The owner's session survived; the page's cross-site sign-out attempt was refused and logged.
    expect((await context.request.get(`${gw.base}/api/auth/sessions`)).status()).toBe(200);
    const refused = await (await gw.fetch("/api/security/events?kind=origin_not_allowed")).json();
    expect(refused.events.some((e: { subject: string }) => e.subject === "POST /api/auth/signout-everywhere")).toBe(
      true,
    );
    await context.close();
  });

  it("passes only the allowlisted headers of a backend's answer, and adds the sandbox, nosniff and no-referrer", async () => {
    const response = await gw.fetch(`/apps/${APP}/api/headers`);
    expect(response.status).toBe(200);
    const headers = Object.fromEntries(response.headers);
    expect(headers["cache-control"]).toBe("max-age=60");
    expect(headers.etag).toBe('"v1"');
    expect(headers["content-security-policy"]).toMatch(/^sandbox allow-scripts/);
    expect(headers["x-content-type-options"]).toBe("nosniff");
    expect(headers["referrer-policy"]).toBe("no-referrer");
    for (const dropped of [
      "set-cookie",
      "refresh",
      "clear-site-data",
      "link",
      "www-authenticate",
      "access-control-allow-origin",
      "access-control-allow-credentials",
    ]) {
      expect(headers[dropped], dropped).toBeUndefined();
    }
  });

  it("turns a backend redirect off the app into 502 app_redirect_refused in Chromium, and keeps one inside the app", async () => {
    const { context, page } = await ownerContext();
    const contacted: string[] = [];
    await context.route(
      (url) => !/^http:\/\/127\.0\.0\.1:/.test(url.href),
      (route) => {
        contacted.push(route.request().url());
        return route.abort();
      },
    );
    for (const to of [
      "http://evil.example/",
      "//evil.example/",
      "/\\evil.example/",
      "/api/token/local",
      `/apps/${APP}/../../api/auth/sessions`,
    ]) {
      const answer = await page.goto(`${gw.base}/apps/${APP}/api/redirect?to=${encodeURIComponent(to)}`);
      expect(answer?.status(), to).toBe(502);
      expect(answer?.url(), to).toContain(`/apps/${APP}/api/redirect`);
      expect(JSON.parse(await answer!.text()).error.code, to).toBe("app_redirect_refused");
    }
    expect(contacted).toEqual([]);
    const inside = await gw.fetch(`/apps/${APP}/api/redirect?to=page`);
    expect(inside.status).toBe(302);
    expect(inside.headers.get("location")).toBe(`/apps/${APP}/api/page`);
    const followed = await page.goto(`${gw.base}/apps/${APP}/api/redirect?to=page`);
    expect(new URL(followed!.url()).pathname).toBe(`/apps/${APP}/api/page`);
    await context.close();
  });

  it("refuses a cross-site navigation to /%61pi/token/local and other encodings before routing", async () => {
    const { context, page } = await ownerContext();
    await page.goto(`http://localhost:${sibling.port}/elsewhere`);
    const cases: Array<[string, string]> = [
      ["/%61pi/token/local", "request_path_ambiguous"],
      ["/%41pi/token/local", "request_path_ambiguous"],
      ["/api/token/%6cocal", "request_path_ambiguous"],
      ["/api%2ftoken/local", "request_path_ambiguous"],
      ["/api/token/local", "origin_not_allowed"],
    ];
    for (const [path, code] of cases) {
      const answer = await navigateFromPage(page, `${gw.base}${path}`);
      expect(answer.status, path).toBeGreaterThanOrEqual(400);
      expect(JSON.parse(answer.body).error.code, path).toBe(code);
      expect(answer.body, path).not.toMatch(/"token"/);
      await page.goto(`http://localhost:${sibling.port}/elsewhere`);
    }
    await context.close();
  });

  it("refuses another site's navigation to an app backend's API in every spelling the proxy forwards, /apps/<name>/api bare included", async () => {
    // The proxy rows (/apps/:name/api/*) route and forward /apps/<name>/api itself; the Origin
    // check must count it as a backend call too, or the owner's Lax cookie carries another
    // site's GET (or another app's page's) to the backend as the owner.
    const { context, page } = await ownerContext();
    await page.goto(`http://localhost:${sibling.port}/elsewhere`);
    for (const path of [
      `/apps/${APP}/api`,
      `/apps/${APP}/api?action=delete-everything`,
      `/apps/${APP}/api/page`,
      "/api",
      "/api?x=1",
    ]) {
      const answer = await navigateFromPage(page, `${gw.base}${path}`);
      expect(answer.status, path).toBe(403);
      expect(JSON.parse(answer.body).error.code, path).toBe("origin_not_allowed");
      await page.goto(`http://localhost:${sibling.port}/elsewhere`);
    }
    await context.close();
    // The app's own sandboxed UI (an opaque origin, its token as Bearer) is let through to the bare path as to any other.
    const host = `127.0.0.1:${gw.port}`;
    for (const path of [`/apps/${APP}/api`, `/apps/${APP}/api/token`]) {
      const answer = await rawRequest(gw.port, {
        path,
        headers: { host, origin: "null", "sec-fetch-site": "cross-site", authorization: `Bearer ${appToken}` },
      });
      expect(answer.body, path).not.toContain("origin_not_allowed");
    }
  });

  it("refuses the same encodings from any client, before the cross-site guard could be bypassed", async () => {
    const host = `127.0.0.1:${gw.port}`;
    for (const path of [
      "/%61pi/token/local",
      "/%61pi/auth/sessions",
      "/apps/hostile%2Danswers/api/page",
      "/api/status/%2e%2e/token/local",
      "/api/%252e%252e/status",
      "/api/status/%C0%AE%C0%AE",
      "/api/status%00",
      "/api//status",
    ]) {
      const answer = await rawRequest(gw.port, {
        path,
        headers: { host, authorization: `Bearer ${gw.token}`, "sec-fetch-site": "cross-site" },
      });
      expect(answer.status, path).toBe(400);
      expect(JSON.parse(answer.body).error.code, path).toBe("request_path_ambiguous");
    }
    const rows = (await (await gw.fetch("/api/security/events?kind=request_path_ambiguous")).json()).events;
    expect(rows.some((r: { subject: string }) => r.subject === "GET /%61pi/token/local")).toBe(true);
  });

  it("parses Authorization once and strictly: a tab, a second word or a second header is refused, another scheme is ignored", async () => {
    const host = `127.0.0.1:${gw.port}`;
    for (const authorization of [
      `Bearer\t${gw.token}`,
      `Bearer ${gw.token} ${appToken}`,
      [`Bearer ${appToken}`, `Bearer ${gw.token}`],
      "Bearer",
      `Basic eDp5, Bearer ${gw.token}`,
    ]) {
      const answer = await rawRequest(gw.port, { path: "/api/status", headers: { host, authorization } });
      expect(answer.status, String(authorization)).toBe(400);
      expect(JSON.parse(answer.body).error.code, String(authorization)).toBe("auth_header_malformed");
    }
    expect(
      (await rawRequest(gw.port, { path: "/api/status", headers: { host, authorization: `bearer ${gw.token}` } }))
        .status,
    ).toBe(200);
    const basic = await rawRequest(gw.port, {
      path: "/api/auth/sessions",
      headers: { host, authorization: "Basic eDp5" },
    });
    expect(JSON.parse(basic.body).error.code).toBe("session_required");
    // A sandboxed UI's cross-site call gets the CORS exemption only with the one parsed Bearer.
    const tabbed = await rawRequest(gw.port, {
      path: `/apps/${APP}/api/headers`,
      headers: { host, origin: "null", "sec-fetch-site": "cross-site", authorization: `Bearer\t${appToken}` },
    });
    expect(JSON.parse(tabbed.body).error.code).toBe("auth_header_malformed");
  });

  it("a cookie tossed from a sibling loopback port neither locks the owner out nor signs anyone in", async () => {
    const name = `pc_token_${gw.port}`;
    planted.cookies = [
      `${name}=junk; Path=/api/auth`,
      `${name}=${appToken}; Path=/api/security`,
      `__Host-${name}=junk; Secure; Path=/api`,
      `__Host-${name}=junk; Path=/`,
    ];
    // The owner, signed in, visits the sibling port; the planted copies land in the jar.
    const { context, page } = await ownerContext();
    await page.goto(`http://127.0.0.1:${sibling.port}/plant`);
    const jar = await context.cookies();
    expect(
      jar
        .filter((c) => c.name === name && c.path !== "/")
        .map((c) => c.path)
        .sort(),
    ).toEqual(["/api/auth", "/api/security"]);
    expect(jar.filter((c) => c.name === `__Host-${name}`).map((c) => c.value)).not.toContain("junk");
    // The dashboard still reaches the owner's routes with the owner's session.
    await page.goto(`${gw.base}/`);
    const fromDashboard = await page.evaluate(async () => (await fetch("/api/auth/sessions")).status);
    expect(fromDashboard).toBe(200);
    expect((await context.request.get(`${gw.base}/api/security/events`)).status()).toBe(200);
    await context.close();

    // Someone never signed in gets the same planted copies (junk, and the app's own token): nothing signs them in.
    const stranger = await browser.newContext();
    const strangerPage = await stranger.newPage();
    await strangerPage.goto(`http://127.0.0.1:${sibling.port}/plant`);
    for (const path of ["/api/auth/sessions", "/api/security/events"]) {
      const answer = await stranger.request.get(`${gw.base}${path}`);
      expect(answer.status(), path).toBe(403);
      expect(await errorCodeOf(answer), path).toBe("session_required");
    }
    await stranger.close();
  });

  it("refuses two copies of the session cookie name with auth_cookie_conflict and logs it, when the browser kept no __Host- copy", async () => {
    const name = `pc_token_${gw.port}`;
    const link = await rawRequest(gw.port, { path: `/?token=${gw.token}`, headers: { host: `127.0.0.1:${gw.port}` } });
    const setCookies = ([] as string[]).concat(link.headers["set-cookie"] ?? []);
    const fallback = setCookies.find((c) => c.startsWith(`${name}=`))!.split(";")[0];
    // A browser that keeps no Secure cookie over http holds only the fallback copy, and then the planted one.
    const context = await browser.newContext();
    await context.addCookies([
      { name, value: fallback.slice(name.length + 1), domain: "127.0.0.1", path: "/", httpOnly: true, sameSite: "Lax" },
      { name, value: "junk", domain: "127.0.0.1", path: "/api" },
    ]);
    const answer = await context.request.get(`${gw.base}/api/auth/sessions`);
    expect(answer.status()).toBe(403);
    expect(await errorCodeOf(answer)).toBe("auth_cookie_conflict");
    const rows = (await (await gw.fetch("/api/security/events?kind=auth_cookie_conflict")).json()).events;
    expect(
      rows.some((r: { subject: string; detail: Record<string, unknown> }) => r.subject === "GET /api/auth/sessions"),
    ).toBe(true);
    expect(JSON.stringify(rows)).not.toContain("junk");
    // The fallback copy alone still works: the conflict is the planted copy, not the owner's.
    expect((await gw.fetch("/api/auth/sessions", { owner: false, headers: { cookie: fallback } })).status).toBe(200);
    await context.close();
  });

  it("bounds an app's calls through its own proxy: a backend calling itself forever gets 508 app_proxy_loop", async () => {
    const response = await gw.fetch(`/apps/${APP}/api/loop?gateway=${gw.port}`);
    const text = await response.text();
    expect(response.status, text).toBe(200);
    const hops: Array<string | null> = [];
    let level = JSON.parse(text) as { hop: string | null; status: number; inner: unknown };
    for (;;) {
      hops.push(level.hop);
      if (level.status !== 200) {
        expect(level.status).toBe(508);
        expect((level.inner as { error: { code: string } }).error.code).toBe("app_proxy_loop");
        break;
      }
      level = level.inner as typeof level;
    }
    // The owner's call is hop 0; the app's own nested calls count 1..8; the ninth is refused.
    expect(hops).toEqual(["0", "1", "2", "3", "4", "5", "6", "7", "8"]);
    // The slots were released when the answers ended: the next chain is as deep again.
    const again = await gw.fetch(`/apps/${APP}/api/loop?gateway=${gw.port}`);
    expect(JSON.stringify(await again.json()).match(/"hop"/g)?.length).toBe(9);
  });
});
