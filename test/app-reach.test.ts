// App reach through the real gateway to real backends: the signed reverse proxy, app tokens
// (alone, beside an owner cookie, after disable), the permission gate, app messaging, UI
// serving, and the worker's own signer against the golden vectors.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { request as httpRequest } from "node:http";
import { loadVectors } from "../apps/sdk/test-vectors";
import { repoRoot, rawRequest, removeHome, runCli, startGateway, type RunningGateway } from "./helpers/gateway";
import { getFromBackend } from "./helpers/backends";

const nodeNotes = join(repoRoot, "apps", "fixtures", "node-notes");
const pyEcho = join(repoRoot, "apps", "fixtures", "py-echo");
const vectors = loadVectors();

/** A copy of node-notes under another name and grants, with one extra route that tries to plant a cookie. */
function probeApp(root: string, name: string, permissions: Record<string, unknown>): string {
  const dir = join(root, name);
  cpSync(nodeNotes, dir, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(dir, "app.json"), "utf8"));
  writeFileSync(
    join(dir, "app.json"),
    JSON.stringify({ ...manifest, name, displayName: name, permissions: { ...manifest.permissions, ...permissions } }),
  );
  const server = readFileSync(join(dir, "server.mjs"), "utf8").replace(
    '"GET /api/echo": echo,',
    '"GET /api/echo": echo,\n  "GET /api/plant-cookie": (req, res) => { res.writeHead(200, { "set-cookie": "pc_token_1=planted; Path=/", "content-type": "application/json" }); res.end("{}"); },',
  );
  writeFileSync(join(dir, "server.mjs"), server);
  return dir;
}

async function install(gw: RunningGateway, folder: string): Promise<void> {
  const result = await runCli(["apps", "install", folder, "--yes", "--json", "--home", gw.home]);
  expect(result.code, result.stderr + result.stdout).toBe(0);
  for (let i = 0; i < 100; i++) {
    const row = await (await gw.fetch(`/api/apps/${JSON.parse(result.stdout).app.name}`)).json();
    if (row.backend?.healthy) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${folder}'s backend did not become healthy`);
}

/** The app token the proxy hands app `name`'s backend (the backend echoes what it received). */
async function appTokenOf(gw: RunningGateway, name: string): Promise<string> {
  const echo = await (await gw.fetch(`/apps/${name}/api/echo`)).json();
  return echo.headers.authorization.replace(/^Bearer /, "");
}

const asApp = (gw: RunningGateway, token: string, path: string, init: RequestInit = {}) =>
  gw.fetch(path, {
    ...init,
    headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${token}` },
  });

async function code(response: Response): Promise<string | undefined> {
  return ((await response.json()) as { error?: { code?: string } }).error?.code;
}

/** The checks an app token alone must pass, in any auth mode. */
function appTokenChecks(get: () => { gw: RunningGateway; token: string }) {
  it("an app token alone reaches a declared prefix and its own row, and is refused an undeclared route", async () => {
    const { gw, token } = get();
    expect((await asApp(gw, token, "/api/status")).status).toBe(200);
    expect((await asApp(gw, token, "/api/apps/reach")).status).toBe(200);
    const undeclared = await asApp(gw, token, "/api/manifest");
    expect(undeclared.status).toBe(403);
    expect(await code(undeclared)).toBe("app_not_permitted");
  });

  it("an app token is refused the owner-only routes: security log, sessions, app install and management", async () => {
    const { gw, token } = get();
    const json = { "content-type": "application/json" };
    for (const [method, path, body] of [
      ["GET", "/api/security/events", undefined],
      ["GET", "/api/security/events/verify", undefined],
      ["GET", "/api/auth/sessions", undefined],
      ["POST", "/api/auth/signout-everywhere", "{}"],
      ["POST", "/api/apps", JSON.stringify({ source: nodeNotes })],
      ["POST", "/api/apps/preview", JSON.stringify({ source: nodeNotes })],
      ["POST", "/api/apps/reach/disable", "{}"],
      ["GET", "/api/apps", undefined],
      ["GET", "/api/token/local", undefined],
    ] as const) {
      const response = await asApp(gw, token, path, { method, body, headers: body ? json : {} });
      expect(response.status, `${method} ${path}`).toBe(403);
      expect(await code(response)).toBe("app_not_permitted");
    }
  });

  it("an app token reaches neither another app's /apps/<other>/ nor /api/apps/<other>/, and foo never reaches foo-bar", async () => {
    const { gw, token } = get();
    for (const path of ["/apps/reach-bar/api/echo", "/api/apps/reach-bar", "/apps/reach-bar/"]) {
      const response = await asApp(gw, token, path);
      expect(response.status, path).toBe(403);
      expect(await code(response)).toBe("app_not_permitted");
    }
    expect((await asApp(gw, token, "/apps/reach/api/echo")).status).toBe(200);
  });
}

describe("app reach through a running gateway", () => {
  let gw: RunningGateway;
  let root: string;
  let reachToken: string;
  beforeAll(async () => {
    root = mkdtempSync("/var/tmp/pc-reach-");
    gw = await startGateway({ home: mkdtempSync("/var/tmp/pc-reach-home-") });
    await install(gw, probeApp(root, "reach", { api: ["/api/status"], appMessaging: ["reach-b*"] }));
    await install(gw, probeApp(root, "reach-bar", { api: [], appMessaging: [] }));
    await install(gw, nodeNotes);
    await install(gw, pyEcho);
    reachToken = await appTokenOf(gw, "reach");
  }, 120_000);
  afterAll(async () => {
    await gw.stop();
    removeHome(gw.home);
    rmSync(root, { recursive: true, force: true });
  });

  it("reaches the Node and the Python backend, which see the app token and X-PersonalClaw-App but no cookie or owner credential", async () => {
    for (const app of ["node-notes", "py-echo"]) {
      const response = await gw.fetch(`/apps/${app}/api/echo?x=1&y=%2B+z`, {
        method: "POST",
        body: '{"hello":"world"}',
        headers: {
          cookie: `pc_token_${gw.port}=owner-cookie; other=1`,
          "content-type": "application/json",
          "x-personalclaw-proxy": "1:forged:forged",
          "x-personalclaw-app": "someone-else",
        },
      });
      expect(response.status, app).toBe(200);
      const echo = await response.json();
      expect(echo.target).toBe("/api/echo?x=1&y=%2B+z");
      expect(echo.headers["x-personalclaw-app"]).toBe(app);
      expect(echo.headers.cookie).toBeNull();
      expect(echo.headers.authorization).toMatch(/^Bearer [\w-]+\.[\w-]+$/);
      expect(echo.headers.authorization).not.toContain(gw.token);
      // The forged header was stripped: a second one would have been refused by the SDK.
      expect(echo.headers["x-personalclaw-proxy"]).toBe(true);
      const { createHash } = await import("node:crypto");
      expect(echo.bodySha256).toBe(createHash("sha256").update('{"hello":"world"}').digest("hex"));
    }
  });

  it("hands the backend's token only as an app token: it never authorizes as the owner", async () => {
    const notesToken = await appTokenOf(gw, "node-notes");
    expect(notesToken).toBe(await appTokenOf(gw, "node-notes"));
    expect(await code(await asApp(gw, notesToken, "/api/security/events"))).toBe("app_not_permitted");
  });

  it("a backend has no port on the host's loopback, and a request straight to its socket is refused with 401: nothing unsigned runs", async () => {
    for (const app of ["node-notes", "py-echo"]) {
      const row = await (await gw.fetch(`/api/apps/${app}`)).json();
      expect(row.backend.port, app).toBeNull();
      const direct = await getFromBackend(gw.home, row.backend, "/api/echo");
      expect(direct.status, app).toBe(401);
      expect(JSON.parse(direct.body).error.code).toBe("proxy_signature_invalid");
      expect((await getFromBackend(gw.home, row.backend, "/health")).status).toBe(200);
    }
  });

  it("never passes a backend's Set-Cookie to the browser", async () => {
    const response = await gw.fetch("/apps/reach/api/plant-cookie");
    expect(response.status).toBe(200);
    expect(response.headers.get("set-cookie")).toBeNull();
  });

  it("refuses encoded-slash, backslash and dot-segment tricks in the proxied path", async () => {
    for (const path of [
      "/apps/reach/api/..%2F..%2Fapi%2Fstatus",
      "/apps/reach/api/%2e%2e/x",
      "/apps/reach/api/a%5Cb",
      "/apps/reach/api//x",
    ]) {
      const response = await rawRequest(gw.port, {
        path,
        headers: { host: `127.0.0.1:${gw.port}`, authorization: `Bearer ${gw.token}` },
      });
      expect(response.status, path).toBeGreaterThanOrEqual(400);
      expect(response.status, path).toBeLessThan(500);
    }
  });

  it("answers 413 for a proxied body over the cap and 404 for an unknown app", async () => {
    // The answer comes before the upload ends: send the headers and a little of the body, then wait.
    const big = await new Promise<{ status: number; body: string }>((resolvePromise, reject) => {
      const req = httpRequest(
        {
          host: "127.0.0.1",
          port: gw.port,
          method: "POST",
          path: "/apps/reach/api/echo",
          headers: {
            authorization: `Bearer ${gw.token}`,
            "content-type": "text/plain",
            "content-length": String(16 * 1024 * 1024 + 1),
          },
        },
        (res) => {
          let body = "";
          res.on("data", (chunk) => (body += chunk));
          res.on("end", () => {
            req.destroy();
            resolvePromise({ status: res.statusCode ?? 0, body });
          });
        },
      );
      req.on("error", reject);
      req.write("x".repeat(1024));
    });
    expect(big.status).toBe(413);
    expect(JSON.parse(big.body).error.code).toBe("body_too_large");
    const unknown = await gw.fetch("/apps/nope/api/echo");
    expect(unknown.status).toBe(404);
    expect(await code(unknown)).toBe("app_not_found");
  });

  it("signs the golden vectors inside the worker exactly as the SDKs expect", async () => {
    for (const vector of vectors.signing) {
      const response = await gw.fetch("/api/test/sign", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          secret: vector.secret,
          ts: vector.ts,
          nonce: vector.nonce,
          method: vector.method,
          target: vector.target,
          body_base64: vector.body_base64,
        }),
      });
      expect((await response.json()).header, vector.name).toBe(vector.header);
    }
  });

  appTokenChecks(() => ({ gw, token: reachToken }));

  it("narrows an owner cookie to the app's permissions when an app token rides beside it", async () => {
    const link = await rawRequest(gw.port, { path: `/?token=${gw.token}`, headers: { host: `127.0.0.1:${gw.port}` } });
    const cookie = String(([] as string[]).concat(link.headers["set-cookie"] ?? [])[0]).split(";")[0];
    expect((await gw.fetch("/api/security/events", { owner: false, headers: { cookie } })).status).toBe(200);
    const narrowed = await gw.fetch("/api/security/events", {
      owner: false,
      headers: { cookie, authorization: `Bearer ${reachToken}` },
    });
    expect(narrowed.status).toBe(403);
    expect(await code(narrowed)).toBe("app_not_permitted");
    const viaQuery = await gw.fetch(`/api/security/events?app_token=${reachToken}`, {
      owner: false,
      headers: { cookie },
    });
    expect(await code(viaQuery)).toBe("app_not_permitted");
    expect(
      (await gw.fetch("/api/status", { owner: false, headers: { cookie, authorization: `Bearer ${reachToken}` } }))
        .status,
    ).toBe(200);
  });

  it("delivers a message to a declared target once and refuses and logs an undeclared one", async () => {
    const barToken = await appTokenOf(gw, "reach-bar");
    const send = (token: string, to: string) =>
      asApp(gw, token, "/api/apps/message", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ to, body: { hi: to } }),
      });
    expect((await send(reachToken, "reach-bar")).status).toBe(200);
    const refused = await send(barToken, "reach");
    expect(refused.status).toBe(403);
    expect(await code(refused)).toBe("app_message_not_permitted");
    expect(await code(await send(reachToken, "node-notes"))).toBe("app_message_not_permitted");
    const inbox = await (await asApp(gw, barToken, "/api/apps/message")).json();
    expect(inbox.messages).toEqual([{ from: "reach", body: { hi: "reach-bar" }, sentAt: expect.any(String) }]);
    expect((await (await asApp(gw, barToken, "/api/apps/message")).json()).messages).toEqual([]);
    expect((await (await asApp(gw, reachToken, "/api/apps/message")).json()).messages).toEqual([]);
    const rows = (await (await gw.fetch("/api/security/events?kind=app_message_not_permitted")).json()).events;
    expect(
      rows.some(
        (r: { principal: string; subject: string }) => r.principal === "app:reach-bar" && r.subject === "reach",
      ),
    ).toBe(true);
  });

  it("logs an app's refusal once per app, route and reason within five minutes", async () => {
    await asApp(gw, reachToken, "/api/auth/sessions");
    await asApp(gw, reachToken, "/api/auth/sessions");
    const rows = (await (await gw.fetch("/api/security/events?kind=app_not_permitted")).json()).events.filter(
      (r: { principal: string; subject: string }) =>
        r.principal === "app:reach" && r.subject === "GET /api/auth/sessions",
    );
    expect(rows.length).toBe(1);
    expect(rows[0].detail.reason).toBe("owner_only");
  });

  it("hands the owner's browser the app's UI sandboxed: a redirect adding the app token, then the entry with a sandbox CSP", async () => {
    const redirect = await gw.fetch("/apps/node-notes/?rev=abc");
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get("cache-control")).toBe("no-store");
    const location = new URL(redirect.headers.get("location")!, gw.base);
    expect(location.pathname).toBe("/apps/node-notes/");
    expect(location.searchParams.get("rev")).toBe("abc");
    const token = location.searchParams.get("app_token")!;
    expect(token).toBe(await appTokenOf(gw, "node-notes"));
    const page = await gw.fetch(location.pathname + location.search);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(page.headers.get("cache-control")).toBe("no-cache");
    expect(page.headers.get("x-content-type-options")).toBe("nosniff");
    const csp = page.headers.get("content-security-policy")!;
    expect(csp).toMatch(/^sandbox allow-scripts/);
    expect(csp).not.toContain("allow-same-origin");
    const row = await (await gw.fetch("/api/apps/node-notes")).json();
    expect(page.headers.get("x-personalclaw-ui-revision")).toBe(row.ui.revision);
  });

  it("serves the UI's own files to a credential-less request, and nothing outside its UI folder", async () => {
    const script = await gw.fetch("/apps/node-notes/app.js", { owner: false });
    expect(script.status).toBe(200);
    expect(script.headers.get("content-security-policy")).toMatch(/^sandbox /);
    for (const path of [
      "/apps/node-notes/server.mjs",
      "/apps/node-notes/.app_secret",
      "/apps/node-notes/%2e%2e/server.mjs",
      "/apps/py-echo/",
      "/apps/py-echo/server.py",
      "/apps/node-notes/../app.json",
    ]) {
      expect((await gw.fetch(path)).status, path).toBeGreaterThanOrEqual(400);
    }
    expect((await gw.fetch("/apps/node-notes/", { owner: false })).status).toBe(403);
  });

  it("lets a sandboxed UI (Origin: null) call its own backend with its token, and nothing else", async () => {
    const token = await appTokenOf(gw, "node-notes");
    const preflight = await gw.fetch("/apps/node-notes/api/notes", {
      method: "OPTIONS",
      owner: false,
      headers: {
        origin: "null",
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization,content-type",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("null");
    expect(preflight.headers.get("access-control-allow-headers")).toContain("authorization");
    expect(preflight.headers.get("access-control-allow-credentials")).toBeNull();
    const foreign = await gw.fetch("/apps/node-notes/api/notes", {
      method: "OPTIONS",
      owner: false,
      headers: { origin: "http://evil.example" },
    });
    expect(foreign.status).toBe(403);
    const call = await gw.fetch("/apps/node-notes/api/echo", {
      headers: { origin: "null", "sec-fetch-site": "cross-site", authorization: `Bearer ${token}` },
    });
    expect(call.status).toBe(200);
    expect(call.headers.get("access-control-allow-origin")).toBe("null");
    const link = await rawRequest(gw.port, { path: `/?token=${gw.token}`, headers: { host: `127.0.0.1:${gw.port}` } });
    const cookie = String(([] as string[]).concat(link.headers["set-cookie"] ?? [])[0]).split(";")[0];
    for (const path of ["/api/auth/sessions", "/api/apps/node-notes", "/apps/node-notes/api/echo"]) {
      const withCookie = await gw.fetch(path, {
        owner: false,
        headers: { origin: "null", "sec-fetch-site": "cross-site", cookie },
      });
      expect(withCookie.status, path).toBe(403);
      expect(await code(withCookie)).toBe("origin_not_allowed");
    }
  });

  it("after the app is disabled its token is refused and its proxy answers 409 app_disabled", async () => {
    const disabled = await runCli(["apps", "disable", "reach-bar", "--json", "--home", gw.home]);
    expect(disabled.code).toBe(0);
    const barToken = reachToken; // reach stays enabled: its token still works
    expect((await asApp(gw, barToken, "/api/status")).status).toBe(200);
    const proxy = await gw.fetch("/apps/reach-bar/api/echo");
    expect(proxy.status).toBe(409);
    expect(await code(proxy)).toBe("app_disabled");
  });

  it("revokes a disabled app's tokens", async () => {
    const token = await appTokenOf(gw, "reach");
    expect((await runCli(["apps", "disable", "reach", "--home", gw.home])).code).toBe(0);
    const refused = await asApp(gw, token, "/api/apps/reach");
    expect(refused.status).toBe(403);
    expect(await code(refused)).toBe("auth_bearer_invalid");
    expect((await runCli(["apps", "enable", "reach", "--home", gw.home])).code).toBe(0);
    expect((await asApp(gw, token, "/api/apps/reach")).status).toBe(403);
  });
});

describe("a registry unloaded while idle", () => {
  it("still routes to a healthy backend after workerd unloaded the idle registry object", async () => {
    const gw = await startGateway({ home: mkdtempSync("/var/tmp/pc-reach-idle-") });
    try {
      await install(gw, nodeNotes);
      expect((await gw.fetch("/apps/node-notes/api/echo")).status).toBe(200);
      // workerd unloads a Durable Object after about 10 s without requests; nothing here touches it for 13 s.
      await new Promise((r) => setTimeout(r, 13_000));
      const after = await gw.fetch("/apps/node-notes/api/echo");
      expect(after.status).toBe(200);
      expect((await (await gw.fetch("/api/status")).json()).apps).toEqual({ installed: 2, running: 1 });
    } finally {
      await gw.stop();
      removeHome(gw.home);
    }
  }, 60_000);
});

describe("app reach with PERSONALCLAW_AUTH_MODE=none", () => {
  let gw: RunningGateway;
  let root: string;
  let token: string;
  beforeAll(async () => {
    root = mkdtempSync("/var/tmp/pc-reach-none-");
    gw = await startGateway({
      home: mkdtempSync("/var/tmp/pc-reach-none-home-"),
      env: { PERSONALCLAW_AUTH_MODE: "none" },
    });
    await install(gw, probeApp(root, "reach", { api: ["/api/status"], appMessaging: [] }));
    await install(gw, probeApp(root, "reach-bar", { api: [], appMessaging: [] }));
    token = await appTokenOf(gw, "reach");
  }, 120_000);
  afterAll(async () => {
    await gw.stop();
    removeHome(gw.home);
    rmSync(root, { recursive: true, force: true });
  });

  it("answers the owner without a credential", async () => {
    expect((await gw.fetch("/api/security/events", { owner: false })).status).toBe(200);
  });

  appTokenChecks(() => ({ gw, token }));
});
