// The foundation against a really started gateway: start/stop, state across restarts,
// API conventions, the host/origin guard, the internal credential and the route docs.
import { describe, expect, it } from "vitest";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { runtimeDir } from "../host-bridge/home";
import {
  errorCode,
  gatewayPerSuite,
  makeHome,
  rawRequest,
  removeHome,
  repoRoot,
  runCli,
  startGateway,
  type RunningGateway,
} from "./helpers/gateway";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("a started gateway", () => {
  const gw = gatewayPerSuite();

  it("prints one JSON ready line and answers GET /api/status with version, uptime, mode and app counts", async () => {
    expect(gw.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${gw.port}/\\?token=`));
    const response = await gw.fetch("/api/status");
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body).toMatchObject({ version: "0.1.0", auth_mode: "local_token", apps: { installed: expect.any(Number) } });
    expect(typeof body.uptime_s).toBe("number");
    expect(body.apps.running === null || typeof body.apps.running === "number").toBe(true);
  });

  it("writes gateway.json and a 0600 .local_secret in a 0700 home", () => {
    const file = JSON.parse(readFileSync(join(gw.home, "gateway.json"), "utf8"));
    expect(file).toMatchObject({ pid: gw.pid, port: gw.port, url: `http://127.0.0.1:${gw.port}/` });
    expect(typeof file.bridgePort).toBe("number");
    expect(statSync(join(gw.home, "gateway.json")).mode & 0o777).toBe(0o600);
    expect(statSync(join(gw.home, ".local_secret")).mode & 0o777).toBe(0o600);
    expect(statSync(gw.home).mode & 0o777).toBe(0o700);
    expect(readFileSync(join(gw.home, ".local_secret"), "utf8")).toMatch(/^[0-9a-f]{64}$/);
  });

  it("refuses a second start on the same home, naming the running pid", async () => {
    const second = await runCli(["start", "--port", "0", "--home", gw.home, "--json-ready"]);
    expect(second.code).not.toBe(0);
    expect(second.stderr).toContain(`pid ${gw.pid}`);
    expect(second.stdout).toBe("");
  });

  const post = (body: string, type = "application/json") =>
    gw.fetch("/api/auth/signout-others", { method: "POST", body, headers: { "content-type": type } });

  it("answers malformed JSON, a non-object body and a wrongly typed field with bad_request", async () => {
    for (const body of ["{not json", "[1,2]", "42", '"text"']) {
      const response = await post(body);
      expect(response.status).toBe(400);
      expect(await errorCode(response)).toBe("bad_request");
    }
    const typed = await gw.fetch("/api/security/events?limit=many");
    expect(typed.status).toBe(400);
    const body = await typed.json();
    expect(body.error.code).toBe("bad_request");
    expect(body.error.message).toContain("limit");
  });

  it("refuses a duplicate key and a __proto__ key with bad_request, writing nothing", async () => {
    const before = await (await gw.fetch("/api/auth/sessions")).json();
    for (const body of ['{"a":1,"a":2}', '{"__proto__":{"polluted":true}}', '{"x":{"constructor":{}}}']) {
      const response = await post(body);
      expect(response.status).toBe(400);
      expect(await errorCode(response)).toBe("bad_request");
    }
    const after = await (await gw.fetch("/api/auth/sessions")).json();
    expect(after.sessions.length).toBe(before.sessions.length);
  });

  it("answers a string where a boolean belongs with field_not_a_boolean", async () => {
    const response = await gw.fetch("/api/test/boolean-field", {
      method: "POST",
      body: '{"enabled":"false"}',
      headers: { "content-type": "application/json" },
    });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.error.code).toBe("field_not_a_boolean");
    expect(body.error.message).toContain("enabled");
  });

  it("answers a text/plain POST with 415 unsupported_media_type", async () => {
    const response = await post("{}", "text/plain");
    expect(response.status).toBe(415);
    expect(await errorCode(response)).toBe("unsupported_media_type");
  });

  it("answers a body over 1 MiB with 413 body_too_large", async () => {
    const response = await post(JSON.stringify({ pad: "x".repeat(1024 * 1024 + 10) }));
    expect(response.status).toBe(413);
    expect(await errorCode(response)).toBe("body_too_large");
  });

  it("answers a handler that throws with 500 internal_error and no stack in the body", async () => {
    const response = await gw.fetch("/api/test/throw", {
      method: "POST",
      body: "{}",
      headers: { "content-type": "application/json" },
    });
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(JSON.parse(text).error.code).toBe("internal_error");
    expect(text).not.toMatch(/at \w|\.ts:|\.js:|deliberate failure/);
    await new Promise((r) => setTimeout(r, 200));
    expect(readFileSync(join(gw.home, "logs", "gateway.log"), "utf8")).toContain("deliberate failure");
  });

  it("refuses a foreign Host with 403 host_not_allowed on GET and POST", async () => {
    for (const method of ["GET", "POST"]) {
      const response = await rawRequest(gw.port, {
        method,
        path: "/api/auth/signout-others",
        headers: {
          host: `evil.example:${gw.port}`,
          authorization: `Bearer ${gw.token}`,
          "content-type": "application/json",
        },
        body: method === "POST" ? "{}" : undefined,
      });
      expect(response.status).toBe(403);
      expect(JSON.parse(response.body).error.code).toBe("host_not_allowed");
    }
    const sessions = await (await gw.fetch("/api/auth/sessions")).json();
    expect(sessions.sessions.length).toBeGreaterThan(0);
  });

  it("refuses an API request a browser marks as cross-site, even a GET that would mint a token", async () => {
    for (const site of ["cross-site", "same-site"]) {
      const response = await gw.fetch("/api/token/local", { headers: { "sec-fetch-site": site } });
      expect(response.status, site).toBe(403);
      expect(await errorCode(response)).toBe("origin_not_allowed");
    }
    expect((await gw.fetch("/api/status", { headers: { "sec-fetch-site": "same-origin" } })).status).toBe(200);
    expect((await gw.fetch("/", { owner: false, headers: { "sec-fetch-site": "cross-site" } })).status).toBe(200);
    const appApi = await gw.fetch("/apps/welcome/api/anything", { headers: { "sec-fetch-site": "cross-site" } });
    expect(await errorCode(appApi)).toBe("origin_not_allowed");
  });

  it("refuses a body framed both by Content-Length and Transfer-Encoding with 400 bad_request, writing nothing", async () => {
    const { connect } = await import("node:net");
    const answer = await new Promise<string>((resolvePromise) => {
      const socket = connect(gw.port, "127.0.0.1", () =>
        socket.end(
          `POST /api/auth/signout-everywhere HTTP/1.1\r\nHost: 127.0.0.1:${gw.port}\r\nAuthorization: Bearer ${gw.token}\r\n` +
            "Content-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
        ),
      );
      let text = "";
      socket.on("data", (chunk) => (text += chunk));
      socket.on("close", () => resolvePromise(text));
    });
    expect(answer.split("\r\n")[0]).toBe("HTTP/1.1 400 Bad Request");
    expect(answer).toContain('"code":"bad_request"');
    expect((await gw.fetch("/api/status")).status).toBe(200);
  });

  it("refuses a POST from another Origin with 403 origin_not_allowed", async () => {
    const response = await gw.fetch("/api/auth/signout-others", {
      method: "POST",
      body: "{}",
      headers: { origin: "http://evil.example", "content-type": "application/json" },
    });
    expect(response.status).toBe(403);
    expect(await errorCode(response)).toBe("origin_not_allowed");
    const sessions = await (await gw.fetch("/api/auth/sessions")).json();
    expect(sessions.sessions.length).toBeGreaterThan(0);
  });

  it("refuses the internal credential on a route outside its list, a wrong one, and one naming no work", async () => {
    const secret = readFileSync(join(gw.home, ".local_secret"), "utf8").trim();
    const outside = await gw.fetch("/api/auth/sessions", {
      owner: false,
      headers: { "x-internal-secret": secret, "x-personalclaw-work": "test" },
    });
    expect(outside.status).toBe(403);
    expect(await errorCode(outside)).toBe("internal_route_refused");
    const unknown = await gw.fetch("/api/no/such/route", {
      owner: false,
      headers: { "x-internal-secret": secret, "x-personalclaw-work": "test" },
    });
    expect(await errorCode(unknown)).toBe("internal_route_refused");
    const wrong = await gw.fetch("/api/status", {
      owner: false,
      headers: { "x-internal-secret": "0".repeat(64), "x-personalclaw-work": "test" },
    });
    expect(wrong.status).toBe(403);
    expect(await errorCode(wrong)).toBe("internal_secret_invalid");
    const noWork = await gw.fetch("/api/status", { owner: false, headers: { "x-internal-secret": secret } });
    expect(await errorCode(noWork)).toBe("internal_call_names_no_work");
    const ok = await gw.fetch("/api/status", {
      owner: false,
      headers: { "x-internal-secret": secret, "x-personalclaw-work": "test" },
    });
    expect(ok.status).toBe(200);
    // The header's earlier name still names the work, on both sides of the internal hop.
    const earlier = await gw.fetch("/api/status", {
      owner: false,
      headers: { "x-internal-secret": secret, "x-session-key": "test" },
    });
    expect(earlier.status).toBe(200);
    const file = JSON.parse(readFileSync(join(gw.home, "gateway.json"), "utf8"));
    const bridge = await fetch(`http://127.0.0.1:${file.bridgePort}/sel/anchor`, {
      headers: { "x-internal-secret": secret, "x-session-key": "test" },
    });
    expect(bridge.status).toBe(200);
  });

  it("has a host bridge that refuses a missing and a wrong credential", async () => {
    const file = JSON.parse(readFileSync(join(gw.home, "gateway.json"), "utf8"));
    const bridge = `http://127.0.0.1:${file.bridgePort}/sel/anchor`;
    const missing = await fetch(bridge);
    expect(missing.status).toBe(403);
    expect(await errorCode(missing)).toBe("internal_secret_invalid");
    const wrong = await fetch(bridge, {
      headers: { "x-internal-secret": "f".repeat(64), "x-personalclaw-work": "test" },
    });
    expect(wrong.status).toBe(403);
    const secret = readFileSync(join(gw.home, ".local_secret"), "utf8").trim();
    const right = await fetch(bridge, { headers: { "x-internal-secret": secret, "x-personalclaw-work": "test" } });
    expect(right.status).toBe(200);
    const outside = await fetch(`http://127.0.0.1:${file.bridgePort}/apps/not-an-operation`, {
      method: "POST",
      headers: { "x-internal-secret": secret, "x-personalclaw-work": "test" },
    });
    expect(outside.status).toBe(403);
    expect(await errorCode(outside)).toBe("internal_route_refused");
    await new Promise((r) => setTimeout(r, 300));
    const rows = (await (await gw.fetch("/api/security/events?principal=internal:bridge")).json()).events;
    expect(rows.map((r: { kind: string }) => r.kind)).toEqual(
      expect.arrayContaining(["bridge_internal_secret_invalid", "bridge_internal_route_refused"]),
    );
    expect(JSON.stringify(rows)).not.toContain(secret);
  });

  it("guards a whole-document write with its revision: 428 without If-Match, 409 when stale, nothing written", async () => {
    const put = (body: unknown, ifMatch?: string) =>
      gw.fetch("/api/apps/welcome/config", {
        method: "PUT",
        body: JSON.stringify(body),
        headers: { "content-type": "application/json", ...(ifMatch ? { "if-match": ifMatch } : {}) },
      });
    const first = await (await gw.fetch("/api/apps/welcome/config")).json();
    expect(first).toEqual({ config: {}, revision: expect.stringMatching(/^[0-9a-f]+$/) });
    const missing = await put({ config: { theme: "dark" } });
    expect(missing.status).toBe(428);
    expect(await errorCode(missing)).toBe("revision_required");
    const written = await put({ config: { theme: "dark" } }, `"${first.revision}"`);
    expect(written.status).toBe(200);
    const second = await written.json();
    expect(second.revision).not.toBe(first.revision);
    const stale = await put({ config: { theme: "light" } }, `"${first.revision}"`);
    expect(stale.status).toBe(409);
    const staleBody = await stale.json();
    expect(staleBody.error.code).toBe("stale_write");
    expect(JSON.stringify(staleBody)).not.toContain(second.revision);
    expect(await (await gw.fetch("/api/apps/welcome/config")).json()).toEqual({
      config: { theme: "dark" },
      revision: second.revision,
    });
  });

  it("reads an If-Match sent without quotes as the revision it names", async () => {
    const put = (body: unknown, ifMatch: string) =>
      gw.fetch("/api/apps/welcome/config", {
        method: "PUT",
        body: JSON.stringify(body),
        headers: { "content-type": "application/json", "if-match": ifMatch },
      });
    const read = await (await gw.fetch("/api/apps/welcome/config")).json();
    const written = await put({ config: { theme: "unquoted" } }, read.revision);
    expect(written.status, JSON.stringify(await written.clone().json())).toBe(200);
    const stale = await put({ config: { theme: "lost" } }, read.revision);
    expect(stale.status).toBe(409);
    expect(await errorCode(stale)).toBe("stale_write");
    expect((await (await gw.fetch("/api/apps/welcome/config")).json()).config).toEqual({ theme: "unquoted" });
  });

  it("serves GET /api/manifest with every route and its input schema", async () => {
    const body = await (await gw.fetch("/api/manifest")).json();
    const tokenRoute = body.routes.find((r: { path: string }) => r.path === "/api/token/local");
    expect(tokenRoute).toMatchObject({ method: "GET", authorization: "OwnerOnly", internal: true });
    expect(tokenRoute.query.properties.ttl.type).toBe("string");
  });
});

/** True once `name`'s backend reports healthy (within 20 s). */
async function waitHealthy(gw: RunningGateway, name: string): Promise<boolean> {
  for (let i = 0; i < 200; i++) {
    const row = (await (await gw.fetch(`/api/apps/${name}`)).json()) as { backend?: { healthy?: boolean } };
    if (row.backend?.healthy) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

/** Installs the node-notes example into `gw`'s home and waits for its backend. */
async function installRunning(gw: RunningGateway, env: NodeJS.ProcessEnv): Promise<void> {
  const installed = await runCli(
    ["apps", "install", join(repoRoot, "apps", "fixtures", "node-notes"), "--yes", "--json", "--home", gw.home],
    env,
  );
  expect(installed.code, installed.stdout + installed.stderr).toBe(0);
  expect(await waitHealthy(gw, "node-notes")).toBe(true);
}

describe("gateway lifecycle", () => {
  it("stops on SIGTERM, removes gateway.json and its runtime folder, and keeps Durable Object state across a restart", async () => {
    const home = makeHome();
    // A private $XDG_RUNTIME_DIR, as a desktop session gives each user.
    const xdg = mkdtempSync(join(tmpdir(), "pc-xdg-"));
    chmodSync(xdg, 0o700);
    try {
      const first = await startGateway({ home, env: { XDG_RUNTIME_DIR: xdg } });
      const runtime = runtimeDir(home, xdg);
      expect(existsSync(join(runtime, "gateway", "gateway.sock"))).toBe(true);
      // A backend runs, so its slot's socket is in the folder too until the stop.
      await installRunning(first, { XDG_RUNTIME_DIR: xdg });
      expect(readdirSync(runtime).filter((name) => name.startsWith("slot-"))).toHaveLength(1);
      const secretOne = readFileSync(join(home, ".local_secret"), "utf8");
      const workerdPid = JSON.parse(readFileSync(join(home, "gateway.json"), "utf8")).workerdPid;
      const minted = await (
        await first.fetch("/api/token/local?ttl=1h", { headers: { "x-local-secret": secretOne.trim() } })
      ).json();
      expect(await first.stop("SIGTERM")).toBe(0);
      expect(existsSync(join(home, "gateway.json"))).toBe(false);
      // Nothing of this start is left under $XDG_RUNTIME_DIR.
      expect(existsSync(runtime)).toBe(false);
      expect(alive(first.pid)).toBe(false);
      expect(alive(workerdPid)).toBe(false);

      // The generated config holds the internal credential and the log key: a wider mode left
      // on an old copy must not survive the next start.
      chmodSync(join(home, "run", "workerd.capnp"), 0o644);
      // Without $XDG_RUNTIME_DIR the folder is inside the home (never a /tmp name another user
      // could make first), and it goes with the stop like the one under $XDG_RUNTIME_DIR.
      const second = await startGateway({ home, env: { XDG_RUNTIME_DIR: "" } });
      const shared = runtimeDir(home, undefined);
      expect(existsSync(join(shared, "gateway", "gateway.sock"))).toBe(true);
      expect(await waitHealthy(second, "node-notes")).toBe(true);
      expect(readdirSync(shared).filter((name) => name.startsWith("slot-"))).toHaveLength(1);
      try {
        expect(statSync(join(home, "run", "workerd.capnp")).mode & 0o777).toBe(0o600);
        expect(readFileSync(join(home, ".local_secret"), "utf8")).not.toBe(secretOne);
        // The token minted before the restart is a row in SessionStore's SQLite: still valid.
        const status = await second.fetch("/api/status", { headers: { authorization: `Bearer ${minted.token}` } });
        expect(status.status).toBe(200);
      } finally {
        await second.stop();
      }
      expect(shared).toBe(join(home, "run", "sockets"));
      // Gone: no socket of the stopped backend is left behind.
      expect(existsSync(shared)).toBe(false);
    } finally {
      removeHome(home);
      rmSync(xdg, { recursive: true, force: true });
    }
  });

  it("without $XDG_RUNTIME_DIR, names other users made first in /tmp never stop a start", async () => {
    const uid = process.getuid!();
    const oldName = (home: string) =>
      join(tmpdir(), `personalclaw-${uid}-${createHash("sha256").update(home).digest("hex").slice(0, 12)}`);
    const squat = (name: string) => {
      mkdirSync(name, { mode: 0o777 });
      chownSync(name, 65534, 65534);
    };
    const home = makeHome();
    // A home too long for its sockets: its folder is a random /tmp name, recorded in the home.
    const longHome = join(makeHome(), "h".repeat(90));
    const target = mkdtempSync(join(tmpdir(), "pc-squat-target-"));
    chownSync(target, 65534, 65534);
    const squatted = [oldName(home), oldName(longHome), join(tmpdir(), `personalclaw-${uid}-${"0".repeat(24)}`)];
    const made: string[] = [];
    try {
      // The name every earlier start used: another user's folder, and a link for the long home.
      squat(squatted[0]!);
      symlinkSync(target, squatted[1]!);
      const first = await startGateway({ home, env: { XDG_RUNTIME_DIR: "" } });
      try {
        expect((await first.fetch("/api/status")).status).toBe(200);
        expect(existsSync(join(home, "run", "sockets", "gateway", "gateway.sock"))).toBe(true);
      } finally {
        expect(await first.stop()).toBe(0);
      }

      // Its recorded name taken after a /tmp cleaner removed it: the start draws another.
      mkdirSync(join(longHome, "run"), { recursive: true, mode: 0o700 });
      writeFileSync(join(longHome, "run", "runtime_folder"), `${squatted[2]}\n`);
      squat(squatted[2]!);
      const second = await startGateway({ home: longHome, env: { XDG_RUNTIME_DIR: "" } });
      try {
        expect((await second.fetch("/api/status")).status).toBe(200);
        const runtime = readFileSync(join(longHome, "run", "runtime_folder"), "utf8").trim();
        made.push(runtime);
        expect(squatted).not.toContain(runtime);
        expect(statSync(runtime).uid).toBe(uid);
        expect(existsSync(join(runtime, "gateway", "gateway.sock"))).toBe(true);
        expect(readdirSync(target)).toEqual([]);
      } finally {
        expect(await second.stop()).toBe(0);
      }
    } finally {
      for (const path of [...squatted, ...made, target, home, dirname(longHome)])
        rmSync(path, { recursive: true, force: true });
    }
  });

  it("`personalclaw stop` stops the running gateway and answers 1 when none runs", async () => {
    const gw = await startGateway();
    try {
      const stopped = await runCli(["stop", "--home", gw.home]);
      expect(stopped.code).toBe(0);
      expect(stopped.stdout).toContain(`pid ${gw.pid}`);
      expect(alive(gw.pid)).toBe(false);
      expect(existsSync(join(gw.home, "gateway.json"))).toBe(false);
      const again = await runCli(["stop", "--home", gw.home]);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain("no gateway is running");
    } finally {
      await gw.stop();
      removeHome(gw.home);
    }
  });

  it("replaces a stale gateway.json whose pid is dead", async () => {
    const home = makeHome();
    try {
      const { writeFileSync, mkdirSync } = await import("node:fs");
      mkdirSync(home, { recursive: true });
      writeFileSync(
        join(home, "gateway.json"),
        JSON.stringify({
          pid: 999999,
          port: 1,
          url: "http://127.0.0.1:1/",
          bridgePort: 2,
          startedAt: "x",
          workerdPid: null,
        }),
      );
      const gw = await startGateway({ home });
      expect(JSON.parse(readFileSync(join(home, "gateway.json"), "utf8")).pid).toBe(gw.pid);
      await gw.stop();
    } finally {
      removeHome(home);
    }
  });
});

describe("the route reference", () => {
  it("docs/api-routes.md equals a fresh render of the route table", async () => {
    const { execFileSync } = await import("node:child_process");
    const fresh = execFileSync(process.execPath, [join(repoRoot, "dist", "render-routes.mjs")], { encoding: "utf8" });
    expect(readFileSync(join(repoRoot, "docs", "api-routes.md"), "utf8")).toBe(fresh);
  });
});
