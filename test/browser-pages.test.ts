// What the owner's browser is answered against a really started gateway: a failed navigation
// (a bad or expired sign-in link, an unknown or disabled app) is a small inert page with the
// same status and stable code, while a script asking for JSON keeps the envelope; the Devices
// rows (browser and system, first address, the owner's name for a device) and the App detail
// log (owner-only, masked, searchable). Hostile text is shown escaped everywhere.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeHome, rawRequest, removeHome, runCli, startGateway, type RunningGateway } from "./helpers/gateway";
import { install, waitForRow } from "./helpers/backends";

const APP = "log-probe";
const PLANTED_KEY = "sk-live_4f9Qx7Lm2Rt8Vb3Nc6Zp1Kd5";
const HOSTILE = "<script>window.__pwned=1</script>";

/** A backend that prints a credential, markup and terminal escapes at start, then a marker per /health. */
function writeProbeApp(folder: string): void {
  mkdirSync(folder, { recursive: true });
  writeFileSync(
    join(folder, "app.json"),
    JSON.stringify({
      name: APP,
      version: "1.0.0",
      backend: { command: "node", args: ["server.mjs"], entryPoint: "server.mjs", healthCheck: "/health" },
      ui: { entry: "ui/index.html" },
      permissions: { api: [`/api/apps/${APP}/`] },
    }),
  );
  writeFileSync(
    join(folder, "server.mjs"),
    [
      'import { createServer } from "node:http";',
      `console.log("probe starting with key ${PLANTED_KEY}");`,
      `console.log(${JSON.stringify(`markup ${HOSTILE} and \u001b[31mred\u001b[0m and \u202eevil`)});`,
      'console.error("NEEDLE-line for the search");',
      "for (let i = 0; i < 30; i++) console.log(`filler line ${i}`);",
      // Every answer echoes the request's headers: a test reads the app token the gateway injects.
      'createServer((req, res) => { res.writeHead(200, { "content-type": "application/json" }); res.end(JSON.stringify({ headers: req.headers })); })',
      '  .listen(Number(process.env.PORT), "127.0.0.1");',
    ].join("\n"),
  );
  mkdirSync(join(folder, "ui"));
  writeFileSync(join(folder, "ui", "index.html"), "<!doctype html><title>probe</title><p>probe</p>\n");
}

/** A GET as a browser's navigation sends it, or with the headers given instead. */
function navigate(gw: RunningGateway, path: string, headers: Record<string, string> = {}) {
  return rawRequest(gw.port, {
    path,
    headers: {
      host: `127.0.0.1:${gw.port}`,
      accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
      "sec-fetch-mode": "navigate",
      "sec-fetch-site": "none",
      "sec-fetch-dest": "document",
      ...headers,
    },
  });
}

function asJson(headers: Record<string, string> = {}) {
  return { accept: "application/json", "sec-fetch-mode": "cors", "sec-fetch-site": "same-origin", ...headers };
}

/** Asserts a failed navigation answered the page: status, code visible, CSP-locked, no script. */
function expectPage(
  answer: { status: number; headers: Record<string, unknown>; body: string },
  status: number,
  code: string,
) {
  expect(answer.status).toBe(status);
  expect(String(answer.headers["content-type"])).toMatch(/^text\/html/);
  const csp = String(answer.headers["content-security-policy"]);
  expect(csp).toContain("default-src 'none'");
  expect(csp).not.toContain("script-src");
  expect(answer.body).toContain(`<code class="error-code">${code}</code>`);
  expect(answer.body).toContain(`data-error-code="${code}"`);
  expect(answer.body.toLowerCase()).not.toContain("<script");
}

function expectEnvelope(
  answer: { status: number; headers: Record<string, unknown>; body: string },
  status: number,
  code: string,
) {
  expect(answer.status).toBe(status);
  expect(String(answer.headers["content-type"])).toMatch(/^application\/json/);
  expect(JSON.parse(answer.body).error.code).toBe(code);
}

describe("browser pages, devices and app logs", () => {
  let gw: RunningGateway;
  const bundles = makeHome("pc-pages-bundles-");

  beforeAll(async () => {
    gw = await startGateway();
    writeProbeApp(join(bundles, APP));
    await install(gw.home, join(bundles, APP));
    const row = await waitForRow(gw, APP, (r) => r.healthy === true, 30_000);
    expect(row?.healthy).toBe(true);
  });
  afterAll(async () => {
    await gw?.stop();
    if (gw) removeHome(gw.home);
    removeHome(bundles);
  });

  async function mintLink(ttl?: string): Promise<string> {
    const minted = await runCli(["token", "--home", gw.home, ...(ttl ? ["--ttl", ttl] : [])]);
    expect(minted.code, minted.stderr).toBe(0);
    return new URL(minted.stdout.trim()).searchParams.get("token")!;
  }

  it("a bad sign-in link is a page saying to run personalclaw token, with 403 session_required; as JSON it is the envelope", async () => {
    const page = await navigate(gw, "/?token=not-a-token.at-all");
    expectPage(page, 403, "session_required");
    expect(page.headers["x-auth-required"]).toBe("true");
    expect(page.body).toContain('<pre class="command"><code>personalclaw token</code></pre>');
    expect(page.body).toContain('<link rel="stylesheet" href="/dashboard.css">');
    expectEnvelope(await navigate(gw, "/?token=not-a-token.at-all", asJson()), 403, "session_required");
    // A script that sends no Accept and no fetch metadata (curl, a CLI) is answered JSON too.
    expectEnvelope(
      await rawRequest(gw.port, { path: "/?token=not-a-token.at-all", headers: { host: `127.0.0.1:${gw.port}` } }),
      403,
      "session_required",
    );
  });

  it("an expired sign-in link is a page with 403 session_expired; the same request asking for JSON gets the envelope", async () => {
    const token = await mintLink("1m");
    const later = String(Date.now() + 5 * 60_000);
    const page = await navigate(gw, `/?token=${token}`, { "x-test-now": later });
    expectPage(page, 403, "session_expired");
    expect(page.body).not.toContain(token);
    expectEnvelope(await navigate(gw, `/?token=${token}`, asJson({ "x-test-now": later })), 403, "session_expired");
  });

  it("opening an unknown app is a page with 404 app_not_found; text from the address is escaped", async () => {
    const cookie = await signInCookie(await mintLink());
    const path = `/apps/no-such-app/`;
    expectPage(await navigate(gw, path, { cookie }), 404, "app_not_found");
    expectEnvelope(await navigate(gw, path, asJson({ cookie })), 404, "app_not_found");
    // An app name is never encoded (the edge refuses that), so the text an attacker can put in a
    // page is a path's quotes and ampersands: each is an entity, never markup or an attribute end.
    const hostile = await navigate(gw, `/it's'onmouseover='x&y.css`, { cookie });
    expectPage(hostile, 404, "not_found");
    expect(hostile.body).toContain("/it&#39;s&#39;onmouseover=&#39;x&amp;y.css");
    expect(hostile.body).not.toContain("'onmouseover='");
  });

  it("opening a disabled app is a page with 409 app_disabled pointing at the Apps page; the envelope as JSON", async () => {
    const cookie = await signInCookie(await mintLink());
    const disabled = await gw.fetch(`/api/apps/${APP}/disable`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(disabled.status).toBe(200);
    try {
      const page = await navigate(gw, `/apps/${APP}/`, { cookie });
      expectPage(page, 409, "app_disabled");
      expect(page.body).toContain('href="/#/apps"');
      expectEnvelope(await navigate(gw, `/apps/${APP}/`, asJson({ cookie })), 409, "app_disabled");
      // An app's own API keeps its envelope even for a navigation.
      expectEnvelope(await navigate(gw, `/apps/${APP}/api/anything`, { cookie }), 409, "app_disabled");
    } finally {
      const enabled = await gw.fetch(`/api/apps/${APP}/enable`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      expect(enabled.status).toBe(200);
    }
  });

  it("a navigation another site started, or under a foreign Host, keeps the bare envelope", async () => {
    expectEnvelope(
      await navigate(gw, "/apps/no-such-app/", { "sec-fetch-site": "cross-site" }),
      403,
      "session_required",
    );
    expectEnvelope(await navigate(gw, "/", { host: "evil.example" }), 403, "host_not_allowed");
  });

  /** Opens a link as a browser would (its User-Agent, from `address`) and answers the cookie it set. */
  async function signInCookie(
    token: string,
    userAgent = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
  ) {
    const answer = await rawRequest(gw.port, {
      path: `/?token=${token}`,
      headers: { host: `127.0.0.1:${gw.port}`, "user-agent": userAgent },
    });
    expect(answer.status).toBe(302);
    const cookies = ([] as string[]).concat(answer.headers["set-cookie"] ?? []);
    const fallback = cookies.find((c) => c.startsWith(`pc_token_${gw.port}=`));
    return fallback!.split(";")[0];
  }

  interface DeviceRow {
    id: string;
    kind: string;
    name: string | null;
    browser: string | null;
    os: string | null;
    user_agent: string | null;
    first_address: string | null;
    created_at: string;
    current: boolean;
  }

  async function devices(cookie: string): Promise<DeviceRow[]> {
    const answer = await rawRequest(gw.port, {
      path: "/api/auth/sessions",
      headers: { host: `127.0.0.1:${gw.port}`, cookie },
    });
    expect(answer.status).toBe(200);
    return JSON.parse(answer.body).sessions;
  }

  function nameDevice(id: string, name: unknown, headers: Record<string, string> = {}) {
    return rawRequest(gw.port, {
      method: "POST",
      path: `/api/auth/sessions/${encodeURIComponent(id)}/name`,
      headers: { host: `127.0.0.1:${gw.port}`, "content-type": "application/json", ...headers },
      body: JSON.stringify({ name }),
    });
  }

  it("a device row names its browser and system from the User-Agent, its first address and when it was created; a hostile User-Agent is escaped", async () => {
    const cookie = await signInCookie(
      await mintLink(),
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
    );
    const mine = (await devices(cookie)).find((d) => d.current)!;
    expect(mine).toMatchObject({
      kind: "browser",
      browser: "Chrome 126",
      os: "Windows",
      first_address: "127.0.0.1",
      name: null,
    });
    expect(Date.parse(mine.created_at)).toBeGreaterThan(Date.now() - 60_000);

    // The UTF-8 bytes of a right-to-left override, sent raw in the header.
    const hostileCookie = await signInCookie(await mintLink(), `${HOSTILE} \xe2\x80\xae`);
    const hostile = (await devices(hostileCookie)).find((d) => d.current)!;
    expect(hostile.browser).toBeNull();
    expect(hostile.user_agent).toContain(HOSTILE);
    expect(hostile.user_agent).not.toContain("\u202e");
  });

  it("the owner names a device; an empty, overlong, bidi or ANSI name is refused with device_name_invalid, and markup stays text", async () => {
    const cookie = await signInCookie(await mintLink());
    const mine = (await devices(cookie)).find((d) => d.current)!;
    const owner = { authorization: `Bearer ${gw.token}` };
    for (const bad of ["", "   ", "x".repeat(65), "laptop\u202egnp.exe", "red\u001b[31m", "two\nlines", "a\\u202e"]) {
      const refused = await nameDevice(mine.id, bad, owner);
      expect(refused.status, JSON.stringify(bad)).toBe(400);
      expect(JSON.parse(refused.body).error.code).toBe("device_name_invalid");
    }
    expect((await devices(cookie)).find((d) => d.id === mine.id)!.name).toBeNull();

    const named = await nameDevice(mine.id, `  ${HOSTILE}  `, owner);
    expect(named.status).toBe(200);
    expect(JSON.parse(named.body).session.name).toBe(HOSTILE);
    expect((await devices(cookie)).find((d) => d.id === mine.id)!.name).toBe(HOSTILE);
    const cleared = await nameDevice(mine.id, null, owner);
    expect(JSON.parse(cleared.body).session.name).toBeNull();

    const unknown = await nameDevice("no-such-session", "desk", owner);
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body).error.code).toBe("session_not_found");
  });

  it("naming a device refuses anyone but the owner: no credential, and an app's own token", async () => {
    const cookie = await signInCookie(await mintLink());
    const mine = (await devices(cookie)).find((d) => d.current)!;
    const anonymous = await nameDevice(mine.id, "desk");
    expect(anonymous.status).toBe(403);
    expect(JSON.parse(anonymous.body).error.code).toBe("session_required");
    const appToken = await appTokenOf(APP);
    const app = await nameDevice(mine.id, "desk", { authorization: `Bearer ${appToken}` });
    expect(app.status).toBe(403);
    expect((await devices(cookie)).find((d) => d.id === mine.id)!.name).toBeNull();
  });

  /** The token the gateway injects into the app's proxied requests, as its backend saw it. */
  async function appTokenOf(name: string): Promise<string> {
    const answer = await gw.fetch(`/apps/${name}/api/echo`);
    expect(answer.status).toBe(200);
    const echoed = (await answer.json()) as { headers: { authorization: string } };
    return echoed.headers.authorization.replace(/^Bearer /, "");
  }

  it("an app's backend log: owner-only, credentials masked, markup and escapes made text, search finds a line, lines caps the count", async () => {
    const read = async (query: string, headers: Record<string, string> = { authorization: `Bearer ${gw.token}` }) =>
      rawRequest(gw.port, {
        path: `/api/apps/${APP}/logs${query}`,
        headers: { host: `127.0.0.1:${gw.port}`, ...headers },
      });
    let all: string[] = [];
    for (let i = 0; i < 50 && !all.some((l) => l.includes("filler line 29")); i++) {
      const answer = await read("?lines=500");
      expect(answer.status).toBe(200);
      all = JSON.parse(answer.body).lines;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(all.some((l) => l.includes("probe starting with key"))).toBe(true);
    expect(all.join("\n")).not.toContain(PLANTED_KEY);
    const markup = all.find((l) => l.includes("markup"))!;
    expect(markup).toContain(HOSTILE);
    expect(markup).toContain("\\x1b[31m");
    expect(markup).toContain("\\u202e");
    expect(markup).not.toMatch(/[\u001b\u202e]/);

    const found = JSON.parse((await read("?q=needle-LINE")).body).lines as string[];
    // One per start of the backend (disabling and enabling it above started it again).
    expect(found.length).toBe(all.filter((l) => l.includes("probe starting")).length);
    for (const line of found) expect(line).toContain("NEEDLE-line for the search");
    // The search runs on masked text: a credential cannot be found by guessing it.
    expect(JSON.parse((await read(`?q=${encodeURIComponent(PLANTED_KEY.slice(0, 12))}`)).body).lines).toEqual([]);
    const three = JSON.parse((await read("?lines=3")).body).lines as string[];
    expect(three).toHaveLength(3);
    expect(three).toEqual(all.slice(-3));

    const bad = await read("?lines=501");
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).error.code).toBe("bad_request");
    const anonymous = await read("", {});
    expect(anonymous.status).toBe(403);
    const asApp = await read("", { authorization: `Bearer ${await appTokenOf(APP)}` });
    expect(asApp.status).toBe(403);
    const missing = await rawRequest(gw.port, {
      path: "/api/apps/no-such-app/logs",
      headers: { host: `127.0.0.1:${gw.port}`, authorization: `Bearer ${gw.token}` },
    });
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body).error.code).toBe("app_not_found");
  });

  it("the sign-in link's own words say what it is: how long it signs in, the first address, how to end it", async () => {
    const secret = (await import("node:fs")).readFileSync(join(gw.home, ".local_secret"), "utf8").trim();
    const minted = await rawRequest(gw.port, {
      path: "/api/token/local?ttl=30m",
      headers: {
        host: `127.0.0.1:${gw.port}`,
        "x-internal-secret": secret,
        "x-personalclaw-work": "test",
        "x-local-secret": secret,
      },
    });
    expect(minted.status).toBe(200);
    const body = JSON.parse(minted.body) as { explains: string; expires_at: string };
    expect(body.explains).toContain(`for 30 minutes (until ${body.expires_at})`);
    expect(body.explains).not.toContain("24 hours");
    expect(body.explains).toContain("first address that opens it");
    expect(body.explains).toContain("Devices page");
    expect(body.explains).toContain("not a one-time code");
  });
});
