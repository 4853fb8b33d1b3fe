// Owner sign-in against a really started gateway: every refusal code and reason, links
// bound to their first address, per-kind limits across a restart, key rotation, token
// lifetimes, owner presence, auth modes, and the security-log rows — never a token in any
// answer or row.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { makeHome, rawRequest, removeHome, runCli, startGateway, type RunningGateway } from "./helpers/gateway";

const HOUR = 3_600_000;

function localSecret(gw: RunningGateway): string {
  return readFileSync(join(gw.home, ".local_secret"), "utf8").trim();
}

async function mint(gw: RunningGateway, ttl = "7d"): Promise<string> {
  const response = await gw.fetch(`/api/token/local?ttl=${ttl}`, {
    owner: false,
    headers: { "x-internal-secret": localSecret(gw), "x-personalclaw-work": "test", "x-local-secret": localSecret(gw) },
  });
  expect(response.status).toBe(200);
  return (await response.json()).token;
}

/** Opens a sign-in link from `address`; returns the status, the cookie it set and the body. */
async function openLink(
  gw: RunningGateway,
  token: string,
  opts: { address?: string; now?: number; path?: string } = {},
) {
  const answer = await rawRequestFrom(
    gw.port,
    opts.address ?? "127.0.0.1",
    `${opts.path ?? "/"}?token=${token}`,
    opts.now,
  );
  const setCookies = ([] as string[]).concat(answer.headers["set-cookie"] ?? []);
  const setCookie = setCookies[0] ?? null;
  return { ...answer, setCookie, setCookies, cookie: setCookie ? setCookie.split(";")[0] : null };
}

function rawRequestFrom(
  port: number,
  address: string,
  path: string,
  now?: number,
  headers: Record<string, string> = {},
) {
  return new Promise<{ status: number; headers: Record<string, any>; body: string }>((resolvePromise, reject) => {
    import("node:http").then(({ request }) => {
      const req = request(
        {
          host: "127.0.0.1",
          port,
          path,
          localAddress: address,
          headers: { host: `127.0.0.1:${port}`, ...(now ? { "x-test-now": String(now) } : {}), ...headers },
        },
        (res) => {
          let body = "";
          res.on("data", (c) => (body += c));
          res.on("end", () => resolvePromise({ status: res.statusCode ?? 0, headers: res.headers, body }));
        },
      );
      req.on("error", reject);
      req.end();
    });
  });
}

async function withCookie(gw: RunningGateway, cookie: string, path = "/api/status", now?: number) {
  const response = await gw.fetch(path, {
    owner: false,
    headers: { cookie, ...(now ? { "x-test-now": String(now) } : {}) },
  });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

describe("sign-in of a running gateway", () => {
  let gw: RunningGateway;
  const seenTokens: string[] = [];
  const answers: string[] = [];
  beforeAll(async () => {
    gw = await startGateway();
    seenTokens.push(gw.token);
  });
  afterAll(async () => {
    await gw.stop();
    removeHome(gw.home);
  });

  it("exchanges a ?token= link for an HttpOnly host-only cookie and redirects to the same URL without the token", async () => {
    const token = await mint(gw);
    seenTokens.push(token);
    const opened = await openLink(gw, token, { path: "/api/status" });
    expect(opened.status).toBe(302);
    expect(opened.headers.location).toBe("/api/status");
    expect(opened.headers["cache-control"]).toBe("no-store");
    expect(opened.headers["referrer-policy"]).toBe("no-referrer");
    // The __Host- copy (Secure, Path=/, no Domain: no sibling port can plant a copy that shadows it) and the fallback.
    expect(opened.setCookies).toHaveLength(2);
    expect(opened.setCookies[0]).toMatch(
      new RegExp(`^__Host-pc_token_${gw.port}=[^;]+; Secure; HttpOnly; SameSite=Lax; Path=/; Max-Age=\\d+$`),
    );
    expect(opened.setCookies[1]).toMatch(
      new RegExp(`^pc_token_${gw.port}=[^;]+; HttpOnly; SameSite=Lax; Path=/; Max-Age=\\d+$`),
    );
    expect(opened.setCookies[0].split(";")[0].split("=")[1]).toBe(opened.setCookies[1].split(";")[0].split("=")[1]);
    for (const cookie of opened.setCookies) {
      expect(cookie).not.toMatch(/Domain=/i);
      expect(cookie).not.toContain(token);
    }
    const status = await withCookie(gw, opened.cookie!);
    expect(status.status).toBe(200);
  });

  it("keeps the Bearer path stateless: no cookie is set", async () => {
    const response = await gw.fetch("/api/status");
    expect(response.status).toBe(200);
    expect(response.headers.get("set-cookie")).toBeNull();
  });

  it("refuses a link opened again from another loopback address with link_used", async () => {
    const token = await mint(gw);
    seenTokens.push(token);
    expect((await openLink(gw, token, { address: "127.0.0.1" })).status).toBe(302);
    expect((await openLink(gw, token, { address: "127.0.0.1" })).status).toBe(302);
    const second = await openLink(gw, token, { address: "127.0.0.2" });
    answers.push(second.body);
    expect(second.status).toBe(403);
    expect(second.headers["x-auth-required"]).toBe("true");
    expect(JSON.parse(second.body).error).toMatchObject({ code: "session_required", detail: { reason: "link_used" } });
    // The refused link is in the security log, by its reason, and the token is not.
    const rows = (await (await gw.fetch("/api/security/events?kind=sign_in_link_refused")).json()).events as Array<{
      detail: { reason: string };
    }>;
    expect(rows.some((r) => r.detail.reason === "link_used")).toBe(true);
    expect(JSON.stringify(rows)).not.toContain(token);
  });

  it("refuses a link opened after 24 hours with link_expired", async () => {
    const token = await mint(gw, "7d");
    seenTokens.push(token);
    const late = await openLink(gw, token, { now: Date.now() + 25 * HOUR });
    answers.push(late.body);
    expect(late.status).toBe(403);
    expect(JSON.parse(late.body).error).toMatchObject({ code: "session_expired", detail: { reason: "link_expired" } });
  });

  it("refuses an expired session with session_expired / expired", async () => {
    const token = await mint(gw, "1h");
    seenTokens.push(token);
    const opened = await openLink(gw, token);
    const later = await withCookie(gw, opened.cookie!, "/api/status", Date.now() + 2 * HOUR);
    answers.push(JSON.stringify(later.body));
    expect(later.status).toBe(403);
    expect(later.body.error).toMatchObject({ code: "session_expired", detail: { reason: "expired" } });
    expect(later.headers.get("x-auth-required")).toBe("true");
    // The refused cookie is in the security log (counted per route and code), the cookie is not.
    const logged = (await (await gw.fetch("/api/security/events?kind=auth_cookie_refused")).json()).events as Array<{
      subject: string;
      principal: string;
      detail: { code?: string };
    }>;
    expect(logged).toContainEqual(
      expect.objectContaining({
        subject: "GET /api/status",
        principal: "anonymous",
        detail: expect.objectContaining({ code: "session_expired" }),
      }),
    );
    expect(JSON.stringify(logged)).not.toContain(opened.cookie!.split("=")[1]!);
  });

  it("answers a garbage cookie and a token signed by another key exactly like no credential", async () => {
    const none = await withCookie(gw, "unrelated=1");
    const garbage = await withCookie(gw, `pc_token_${gw.port}=garbage`);
    const foreign = await withCookie(
      gw,
      `pc_token_${gw.port}=AAAAAAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB`,
    );
    for (const answer of [none, garbage, foreign]) {
      expect(answer.status).toBe(403);
      expect(answer.body).toEqual(none.body);
      expect(answer.body.error).toMatchObject({ code: "session_required", detail: { reason: "not_signed_in" } });
    }
    // The log tells them apart: a cookie that signs no one in, and no credential at all.
    const kinds = async (kind: string) =>
      ((await (await gw.fetch(`/api/security/events?kind=${kind}`)).json()).events as Array<{ subject: string }>).map(
        (e) => e.subject,
      );
    expect(await kinds("auth_cookie_refused")).toContain("GET /api/status");
    expect(await kinds("session_required")).toContain("GET /api/status");
  });

  it("answers a garbage cookie carrying an ended session's id exactly like no credential; its own cookie learns why", async () => {
    const cookie = (await openLink(gw, await mint(gw))).cookie!;
    const signedOut = await gw.fetch("/api/auth/logout", {
      method: "POST",
      owner: false,
      headers: { cookie, "content-type": "application/json" },
      body: "{}",
    });
    expect(signedOut.status).toBe(200);
    const none = await withCookie(gw, "unrelated=1");
    const [name, token] = cookie.split("=") as [string, string];
    const claimed = await withCookie(gw, `${name}=${token.split(".")[0]}.${"B".repeat(43)}`);
    expect(claimed.status).toBe(403);
    expect(claimed.body).toEqual(none.body);
    expect(claimed.body.error).toMatchObject({ code: "session_required", detail: { reason: "not_signed_in" } });
    expect((await withCookie(gw, cookie)).body.error).toMatchObject({
      code: "session_signed_out",
      detail: { reason: "signed_out" },
    });
  });

  it("answers every Bearer that cannot authorize with the one auth_bearer_invalid", async () => {
    const expiredToken = await mint(gw, "1h");
    seenTokens.push(expiredToken);
    const cases: Array<Record<string, string>> = [
      { authorization: "Bearer garbage" },
      { authorization: "Bearer AAAAAAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB" },
      { authorization: `Bearer ${expiredToken}`, "x-test-now": String(Date.now() + 2 * HOUR) },
    ];
    const bodies = [];
    for (const headers of cases) {
      const response = await gw.fetch("/api/status", { headers });
      expect(response.status).toBe(403);
      const body = await response.json();
      bodies.push(body);
      answers.push(JSON.stringify(body));
      expect(body.error.code).toBe("auth_bearer_invalid");
    }
    expect(new Set(bodies.map((b) => JSON.stringify(b))).size).toBe(1);
    // Each refusal is in the security log (counted per route), and no token is written there.
    const logged = (await (await gw.fetch("/api/security/events?kind=auth_bearer_invalid")).json()).events as Array<{
      subject: string;
      count?: number;
    }>;
    expect(logged.some((e) => e.subject === "GET /api/status")).toBe(true);
    expect(JSON.stringify(logged)).not.toContain(expiredToken);
    const basic = await gw.fetch("/api/status", { owner: false, headers: { authorization: "Basic dXNlcjpwYXNz" } });
    expect((await basic.json()).error.code).toBe("session_required");
  });

  it("refuses two different owner tokens in the header and ?token= with auth_credential_conflict", async () => {
    const other = await mint(gw);
    seenTokens.push(other);
    const response = await rawRequestFrom(gw.port, "127.0.0.1", `/api/status?token=${other}`, undefined, {
      authorization: `Bearer ${gw.token}`,
    });
    answers.push(response.body);
    expect(response.status).toBe(403);
    expect(JSON.parse(response.body).error.code).toBe("auth_credential_conflict");
    // A Bearer that cannot authorize beside a link is refused too, before the link is spent,
    // and both refusals are kept.
    const garbage = await rawRequestFrom(gw.port, "127.0.0.1", `/api/status?token=${other}`, undefined, {
      authorization: "Bearer garbage",
    });
    answers.push(garbage.body);
    expect(garbage.status).toBe(403);
    expect(JSON.parse(garbage.body).error.code).toBe("auth_bearer_invalid");
    const opened = await openLink(gw, other);
    expect(opened.status).toBe(302);
    expect(opened.cookie).not.toBeNull();
    for (const kind of ["auth_credential_conflict", "auth_bearer_invalid"]) {
      const rows = (await (await gw.fetch(`/api/security/events?kind=${kind}`)).json()).events as Array<{
        subject: string;
      }>;
      expect(rows.map((row) => row.subject)).toContain("GET /api/status");
      expect(JSON.stringify(rows)).not.toContain(other);
    }
  });

  it("signs out this session, another one, all others and everywhere, each with its reason", async () => {
    const open = async () => (await openLink(gw, await mint(gw))).cookie!;
    const [a, b, c] = [await open(), await open(), await open()];
    const logout = await gw.fetch("/api/auth/logout", {
      method: "POST",
      owner: false,
      headers: { cookie: a, "content-type": "application/json" },
      body: "{}",
    });
    expect(logout.status).toBe(200);
    expect(logout.headers.get("set-cookie")).toMatch(/Max-Age=0/);
    expect(logout.headers.getSetCookie().map((c) => c.split("=")[0])).toEqual([
      `__Host-pc_token_${gw.port}`,
      `pc_token_${gw.port}`,
    ]);
    for (const cookie of logout.headers.getSetCookie()) expect(cookie).toMatch(/^[^=]+=; .*Max-Age=0$/);
    expect((await withCookie(gw, a)).body.error).toMatchObject({
      code: "session_signed_out",
      detail: { reason: "signed_out" },
    });

    const sessions = (await (await gw.fetch("/api/auth/sessions", { owner: false, headers: { cookie: c } })).json())
      .sessions;
    expect(JSON.stringify(sessions)).not.toMatch(/secret|hash/);
    const current = sessions.find((s: { current: boolean }) => s.current);
    expect(current.kind).toBe("browser");
    const bId = b.split("=")[1].split(".")[0];
    await gw.fetch(`/api/auth/sessions/${bId}/signout`, {
      method: "POST",
      owner: false,
      headers: { cookie: c, "content-type": "application/json" },
      body: "{}",
    });
    expect((await withCookie(gw, b)).body.error).toMatchObject({
      code: "session_signed_out",
      detail: { reason: "signed_out_elsewhere" },
    });

    const d = await open();
    await gw.fetch("/api/auth/signout-others", {
      method: "POST",
      owner: false,
      headers: { cookie: c, "content-type": "application/json" },
      body: "{}",
    });
    expect((await withCookie(gw, d)).body.error).toMatchObject({
      code: "session_signed_out",
      detail: { reason: "signed_out_others" },
    });
    expect((await withCookie(gw, c)).status).toBe(200);
    // The startup token was one of the others: it no longer authorizes.
    expect((await gw.fetch("/api/status")).status).toBe(403);

    await gw.fetch("/api/auth/signout-everywhere", {
      method: "POST",
      owner: false,
      headers: { cookie: c, "content-type": "application/json" },
      body: "{}",
    });
    const everywhere = await withCookie(gw, c);
    answers.push(JSON.stringify(everywhere.body));
    expect(everywhere.body.error).toMatchObject({
      code: "session_signed_out",
      detail: { reason: "signed_out_everywhere" },
    });
    // Remembered for a week; after that the end reads as `ended`.
    const muchLater = await withCookie(gw, c, "/api/status", Date.now() + 8 * 24 * HOUR);
    expect(muchLater.body.error).toMatchObject({ code: "session_signed_out", detail: { reason: "ended" } });
  });

  it("refuses /api/token/local without owner presence with 401 fresh_sign_in_required", async () => {
    const token = await mint(gw);
    const fresh = await gw.fetch("/api/token/local", { headers: { authorization: `Bearer ${token}` } });
    expect(fresh.status).toBe(200);
    seenTokens.push((await fresh.json()).token);
    const stale = await gw.fetch("/api/token/local", {
      headers: { authorization: `Bearer ${token}`, "x-test-now": String(Date.now() + 11 * 60_000) },
    });
    expect(stale.status).toBe(401);
    const body = await stale.json();
    expect(body.error.code).toBe("fresh_sign_in_required");
    expect(body.error.message).toContain("personalclaw token");
    const wrongSecret = await gw.fetch("/api/token/local", {
      headers: {
        authorization: `Bearer ${token}`,
        "x-local-secret": "0".repeat(64),
        "x-test-now": String(Date.now() + 11 * 60_000),
      },
    });
    expect(wrongSecret.status).toBe(401);
  });

  it("has security-log rows for sign-ins and sign-outs with reason and issuer, never a token", async () => {
    const token = await mint(gw);
    const events = (
      await (await gw.fetch("/api/security/events?limit=500", { headers: { authorization: `Bearer ${token}` } })).json()
    ).events;
    const kinds = new Set(events.map((e: { kind: string }) => e.kind));
    expect(kinds.has("session_signed_in")).toBe(true);
    expect(kinds.has("session_signed_out")).toBe(true);
    const reasons = new Set(
      events
        .filter((e: { kind: string }) => e.kind === "session_signed_out")
        .map((e: { detail: { reason: string } }) => e.detail.reason),
    );
    for (const reason of ["signed_out", "signed_out_elsewhere", "signed_out_others", "signed_out_everywhere"])
      expect(reasons.has(reason)).toBe(true);
    expect(events.find((e: { kind: string }) => e.kind === "session_signed_in").detail.issuer).toBeTruthy();
    const dump = JSON.stringify(events) + answers.join("");
    for (const value of seenTokens) {
      expect(dump).not.toContain(value);
      expect(dump).not.toContain(value.split(".")[1]);
    }
  });
});

describe("limits, rotation, lifetimes and modes", () => {
  it("signs out the least recently used of 21 tokens with reason limit, and still after a restart", async () => {
    const home = makeHome();
    let gw = await startGateway({ home });
    try {
      const tokens: string[] = [];
      for (let i = 0; i < 21; i++) tokens.push(await mint(gw));
      // The startup token (used as Bearer by every fetch) and 20 minted ones: the 1st minted is least recently used.
      const evicted = await openLink(gw, tokens[0]);
      expect(JSON.parse(evicted.body).error).toMatchObject({ code: "session_signed_out", detail: { reason: "limit" } });
      expect((await gw.fetch("/api/status", { headers: { authorization: `Bearer ${tokens[20]}` } })).status).toBe(200);
      await gw.stop();
      gw = await startGateway({ home });
      const afterRestart = await openLink(gw, tokens[0]);
      expect(JSON.parse(afterRestart.body).error).toMatchObject({
        code: "session_signed_out",
        detail: { reason: "limit" },
      });
      expect((await gw.fetch("/api/status", { headers: { authorization: `Bearer ${tokens[20]}` } })).status).toBe(200);
    } finally {
      await gw.stop();
      removeHome(home);
    }
  });

  it("ends the previous start's unopened startup link with reason superseded", async () => {
    const home = makeHome();
    const first = await startGateway({ home });
    await first.stop();
    const second = await startGateway({ home });
    try {
      const old = await openLink(second, first.token);
      expect(JSON.parse(old.body).error).toMatchObject({
        code: "session_signed_out",
        detail: { reason: "superseded" },
      });
      expect((await openLink(second, second.token)).status).toBe(302);
    } finally {
      await second.stop();
      removeHome(home);
    }
  });

  it("ends every earlier session and token with key_replaced after `personalclaw auth rotate-key`", async () => {
    const gw = await startGateway();
    try {
      const token = await mint(gw);
      const browser = (await openLink(gw, await mint(gw))).cookie!;
      const rotated = await runCli(["auth", "rotate-key", "--home", gw.home]);
      expect(rotated.code).toBe(0);
      expect((await withCookie(gw, browser)).body.error).toMatchObject({
        code: "session_signed_out",
        detail: { reason: "key_replaced" },
      });
      expect(JSON.parse((await openLink(gw, token)).body).error).toMatchObject({ detail: { reason: "key_replaced" } });
      expect(
        (await (await gw.fetch("/api/status", { headers: { authorization: `Bearer ${token}` } })).json()).error.code,
      ).toBe("auth_bearer_invalid");
      const fresh = await runCli(["token", "--home", gw.home]);
      expect(fresh.code).toBe(0);
      expect((await openLink(gw, new URL(fresh.stdout.trim()).searchParams.get("token")!)).status).toBe(302);
    } finally {
      await gw.stop();
      removeHome(gw.home);
    }
  });

  it("`personalclaw token --ttl` refuses 91d and soon with their codes and mints 30m", async () => {
    const gw = await startGateway();
    try {
      const long = await runCli(["token", "--ttl", "91d", "--home", gw.home]);
      expect(long.code).not.toBe(0);
      expect(long.stderr).toContain("token_ttl_too_long");
      expect(long.stderr).toContain("90 days");
      expect(long.stdout).toBe("");
      const soon = await runCli(["token", "--ttl", "soon", "--home", gw.home]);
      expect(soon.code).not.toBe(0);
      expect(soon.stderr).toContain("token_ttl_invalid");
      expect(soon.stderr).toMatch(/30m, 20h or 7d/);
      const ok = await runCli(["token", "--ttl", "30m", "--home", gw.home]);
      expect(ok.code).toBe(0);
      expect(ok.stdout.split("\n")[0]).toMatch(
        new RegExp(`^http://127\\.0\\.0\\.1:${gw.port}/\\?token=[\\w-]+\\.[\\w-]+$`),
      );
      expect(ok.stderr).toContain("30 minutes");
      const viaRoute = await gw.fetch("/api/token/local?ttl=91d", { headers: { "x-local-secret": localSecret(gw) } });
      expect(viaRoute.status).toBe(400);
      expect((await viaRoute.json()).error.code).toBe("token_ttl_too_long");
      const api = await (
        await gw.fetch("/api/token/local?ttl=20h", { headers: { "x-local-secret": localSecret(gw) } })
      ).json();
      expect(api).toMatchObject({ expires_in: 72000, open_within: 72000 });
      expect(Date.parse(api.expires_at)).toBeGreaterThan(Date.now());
    } finally {
      await gw.stop();
      removeHome(gw.home);
    }
  });

  it("starts in local_token with a warning when PERSONALCLAW_AUTH_MODE=api_key, and doctor prints the same sentence", async () => {
    const gw = await startGateway({ env: { PERSONALCLAW_AUTH_MODE: "api_key" } });
    try {
      expect(gw.stderr()).toContain(
        'PERSONALCLAW_AUTH_MODE="api_key" is not a mode and was not applied; local_token is in force.',
      );
      expect((await (await gw.fetch("/api/status")).json()).auth_mode).toBe("local_token");
      expect((await gw.fetch("/api/status", { owner: false })).status).toBe(403);
      const doctor = await runCli(["doctor", "--json", "--home", gw.home], { PERSONALCLAW_AUTH_MODE: "api_key" });
      const row = JSON.parse(doctor.stdout).rows.find((r: { name: string }) => r.name === "auth mode");
      expect(row).toMatchObject({
        status: "warn",
        message: 'PERSONALCLAW_AUTH_MODE="api_key" is not a mode and was not applied; local_token is in force.',
      });
    } finally {
      await gw.stop();
      removeHome(gw.home);
    }
  });

  it("in mode none answers the owner without a credential and still binds loopback only", async () => {
    const gw = await startGateway({ env: { PERSONALCLAW_AUTH_MODE: "none", PERSONALCLAW_BIND_HOST: "0.0.0.0" } });
    try {
      const status = await gw.fetch("/api/status", { owner: false });
      expect(status.status).toBe(200);
      expect((await status.json()).auth_mode).toBe("none");
      const config = readFileSync(join(gw.home, "run", "workerd.capnp"), "utf8");
      expect(config).toContain(`address = "127.0.0.1:${gw.port}"`);
      const foreignHost = await rawRequest(gw.port, {
        path: "/api/status",
        headers: { host: `evil.example:${gw.port}` },
      });
      expect(foreignHost.status).toBe(403);
    } finally {
      await gw.stop();
      removeHome(gw.home);
    }
  });
});
