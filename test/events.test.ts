// Live events through a really started gateway: the owner's and apps' sockets on /api/ws, each
// frame through the hub's one scope filter, revocation, inbox subscriptions, the Origin rule,
// and the dashboard in Chromium updating itself from the socket.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { launchChromium } from "./helpers/browser";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { repoRoot, runCli, startGateway, removeHome, type RunningGateway } from "./helpers/gateway";
import { openWebSocket } from "../bench/lib/ws-client.mjs";

const nodeNotes = join(repoRoot, "apps", "fixtures", "node-notes");

interface Frame {
  type: string;
  data: Record<string, unknown>;
}

/** One open socket and every frame it received, in order. */
interface Listener {
  frames: Frame[];
  protocol: string | null;
  closed: Promise<number | null>;
  /** Resolves with the first frame (from now on or already seen) that `match` accepts. */
  waitFor: (match: (frame: Frame) => boolean, timeoutMs?: number) => Promise<Frame>;
  close: () => Promise<unknown>;
}

async function listen(gw: RunningGateway, headers: Record<string, string>): Promise<Listener> {
  const opened = await openWebSocket(gw.port, "/api/ws", headers);
  if (!opened.ok) throw new Error(`upgrade refused: ${opened.status} ${opened.body}`);
  const socket = opened.socket;
  const frames: Frame[] = [];
  const waiters: Array<{ match: (f: Frame) => boolean; resolve: (f: Frame) => void }> = [];
  socket.onText((text: string) => {
    const frame = JSON.parse(text) as Frame;
    frames.push(frame);
    for (const waiter of [...waiters]) {
      if (waiter.match(frame)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(frame);
      }
    }
  });
  return {
    frames,
    protocol: opened.protocol,
    closed: socket.closed,
    waitFor: (match, timeoutMs = 15_000) => {
      const seen = frames.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(new Error(`no matching frame in ${timeoutMs} ms; got ${JSON.stringify(frames.map((f) => f.type))}`)),
          timeoutMs,
        );
        waiters.push({ match, resolve: (f) => (clearTimeout(timer), resolve(f)) });
      });
    },
    close: () => socket.close(),
  };
}

const owner = (gw: RunningGateway) => ({ Authorization: `Bearer ${gw.token}` });
const asApp = (token: string) => ({ Authorization: `Bearer ${token}` });

async function publish(
  gw: RunningGateway,
  type: string,
  data: Record<string, unknown>,
): Promise<{ delivered: number; withheld: number }> {
  const response = await gw.fetch("/api/test/events/publish", {
    method: "POST",
    body: JSON.stringify({ type, data }),
    headers: { "content-type": "application/json" },
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { delivered: number; withheld: number };
}

/** The app's own token, as the gateway hands it to the app's UI page (the ?app_token= of its redirect). */
async function appTokenOf(gw: RunningGateway, name: string): Promise<string> {
  const response = await gw.fetch(`/apps/${name}/`);
  expect(response.status).toBe(302);
  return new URL(response.headers.get("location")!, gw.base).searchParams.get("app_token")!;
}

function writeApp(root: string, name: string, permissions: Record<string, unknown>, version = "0.1.0"): string {
  const dir = join(root, `${name}-${version}`);
  rmSync(dir, { recursive: true, force: true });
  cpSync(nodeNotes, dir, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(dir, "app.json"), "utf8"));
  writeFileSync(
    join(dir, "app.json"),
    JSON.stringify({
      ...manifest,
      name,
      displayName: name,
      version,
      permissions: { ...manifest.permissions, ...permissions },
    }),
  );
  return dir;
}

async function installApp(gw: RunningGateway, folder: string): Promise<void> {
  const result = await runCli(["apps", "install", folder, "--yes", "--json", "--home", gw.home]);
  expect(result.code, result.stderr + result.stdout).toBe(0);
}

async function waitHealthy(gw: RunningGateway, name: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const row = (await (await gw.fetch(`/api/apps/${name}`)).json()) as { backend?: { healthy?: boolean } };
    if (row.backend?.healthy) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${name} did not become healthy`);
}

/** Consent is asked when the disclosure changes; the test is the owner and consents to the review it is shown. */
async function updateApp(gw: RunningGateway, name: string, folder: string): Promise<void> {
  const post = (body: unknown) =>
    gw.fetch(`/api/apps/${name}/update`, {
      method: "POST",
      body: JSON.stringify(body),
      headers: { "content-type": "application/json" },
    });
  let answer = await post({ source: folder });
  if (answer.status === 409) {
    const refused = (await answer.json()) as { error: { code: string; detail: { digest: string } } };
    expect(refused.error.code).toBe("consent_required");
    answer = await post({ source: folder, consent: refused.error.detail.digest });
  }
  expect(answer.status, await answer.clone().text()).toBe(200);
}

async function securityRows(
  gw: RunningGateway,
  kind: string,
  principal?: string,
): Promise<Array<{ subject: string; outcome: string; detail: Record<string, unknown> }>> {
  const query = new URLSearchParams({ kind, limit: "500", ...(principal ? { principal } : {}) });
  const response = await gw.fetch(`/api/security/events?${query}`);
  expect(response.status).toBe(200);
  return (
    (await response.json()) as { events: Array<{ subject: string; outcome: string; detail: Record<string, unknown> }> }
  ).events;
}

/** An app whose UI page uses the SDK's browser client and writes each frame it hears as text. */
function appPageFolder(root: string): string {
  const dir = writeApp(root, "ev-page", { events: ["app.installed"] });
  cpSync(join(repoRoot, "apps", "sdk", "browser", "events.js"), join(dir, "ui", "events.js"));
  writeFileSync(
    join(dir, "ui", "index.html"),
    '<!doctype html><html><head><meta charset="utf-8"><script type="module" src="live.js"></script></head><body><p id="frames"></p></body></html>',
  );
  writeFileSync(
    join(dir, "ui", "live.js"),
    `import { connectEvents } from "./events.js";
const seen = [];
connectEvents()
  .on("hub.hello", (data) => { document.body.dataset.hello = data.principal; })
  .on("*", (data, type) => {
    if (type === "hub.hello") return;
    seen.push(type + ":" + (data.app ?? data.field ?? ""));
    document.getElementById("frames").textContent = seen.join(" ");
  });
`,
  );
  return dir;
}

/**
 * A backend route that opens its own socket to the gateway (through its sandbox's
 * 127.0.0.1:$PERSONALCLAW_PORT relay) with the app token the proxy handed it, and answers the
 * first frame it hears.
 */
const WS_PROBE_ROUTE = `"GET /api/ws-probe": (req, res) => {
    const upgrade = httpRequest({ host: "127.0.0.1", port: Number(process.env.PERSONALCLAW_PORT), path: "/api/ws", headers: {
      connection: "Upgrade", upgrade: "websocket", "sec-websocket-version": "13", "sec-websocket-key": randomBytes(16).toString("base64"), authorization: req.headers.authorization } });
    upgrade.on("response", (answer) => send(res, 200, { status: answer.statusCode, frame: null }));
    upgrade.on("upgrade", (answer, socket, head) => {
      let buffer = head;
      const read = () => {
        if (buffer.length < 2 || buffer.length < 2 + (buffer[1] & 0x7f)) return;
        const frame = JSON.parse(buffer.subarray(2, 2 + (buffer[1] & 0x7f)).toString("utf8"));
        socket.destroy();
        send(res, 200, { status: answer.statusCode, frame });
      };
      socket.on("data", (chunk) => { buffer = Buffer.concat([buffer, chunk]); read(); });
      read();
    });
    upgrade.on("error", (error) => send(res, 200, { status: 0, error: String(error) }));
    upgrade.end();
  },
  "GET /api/echo": echo,`;

function wsProbeApp(root: string): string {
  const dir = writeApp(root, "ev-probe", { events: ["app.installed"] });
  const server = readFileSync(join(dir, "server.mjs"), "utf8")
    .replace('"GET /api/echo": echo,', WS_PROBE_ROUTE)
    .replace(
      'import { createServer } from "node:http";',
      'import { createServer, request as httpRequest } from "node:http";\nimport { randomBytes } from "node:crypto";',
    );
  writeFileSync(join(dir, "server.mjs"), server);
  return dir;
}

const WATCH_EVENTS = [
  "app.installed",
  "app.updated",
  "backend.health_changed",
  "install.progress",
  "security_log.appended",
  "made.up",
];

describe("live events on /api/ws", () => {
  let gw: RunningGateway;
  let root: string;
  let watchToken: string;
  let quietToken: string;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "pc-events-apps-"));
    gw = await startGateway();
    await installApp(
      gw,
      writeApp(root, "ev-watch", {
        events: WATCH_EVENTS,
        eventSubscriptions: ["app.installed", "security_log.appended"],
      }),
    );
    await installApp(gw, writeApp(root, "ev-quiet", { events: [] }));
    await Promise.all([waitHealthy(gw, "ev-watch"), waitHealthy(gw, "ev-quiet")]);
    watchToken = await appTokenOf(gw, "ev-watch");
    quietToken = await appTokenOf(gw, "ev-quiet");
  }, 120_000);
  afterAll(async () => {
    await gw?.stop();
    if (gw) removeHome(gw.home);
    rmSync(root, { recursive: true, force: true });
  });

  it("GET /api/ws without an Upgrade answers 426 ws_upgrade_required", async () => {
    const response = await gw.fetch("/api/ws");
    expect(response.status).toBe(426);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("ws_upgrade_required");
  });

  it("a socket without a credential is refused; the owner's Bearer opens one whose hello says it hears every event", async () => {
    const anonymous = await openWebSocket(gw.port, "/api/ws", {});
    expect(anonymous.ok).toBe(false);
    expect(anonymous.status).toBe(403);
    const socket = await listen(gw, owner(gw));
    const hello = await socket.waitFor((f) => f.type === "hub.hello");
    expect(hello.data).toEqual({ principal: "owner", events: "*" });
    await publish(gw, "config.changed", { field: "sandbox.mode" });
    expect((await socket.waitFor((f) => f.type === "config.changed")).data).toEqual({ field: "sandbox.mode" });
    await socket.close();
  });

  it("an app socket receives only its declared events: never an owner-only one, never one it did not declare", async () => {
    const watch = await listen(gw, asApp(watchToken));
    const quiet = await listen(gw, asApp(quietToken));
    const hello = await watch.waitFor((f) => f.type === "hub.hello");
    // security_log.appended is owner-only and made.up is unclassified: neither is granted.
    expect(hello.data).toEqual({
      principal: "app:ev-watch",
      events: "app.installed,app.updated,backend.health_changed,install.progress",
    });
    expect((await quiet.waitFor((f) => f.type === "hub.hello")).data).toEqual({
      principal: "app:ev-quiet",
      events: "",
    });

    await publish(gw, "security_log.appended", { seq: 1 });
    await publish(gw, "session.signed_in", { session: "s" });
    await publish(gw, "approval.raised", { id: "a1", asked_by: "app:ev-quiet", kind: "k" });
    await publish(gw, "app.enabled", { app: "x" });
    await publish(gw, "backend.health_changed", { app: "x", running: true, healthy: true });
    await publish(gw, "app.installed", { app: "sentinel" });
    await watch.waitFor((f) => f.type === "app.installed" && f.data.app === "sentinel");
    await new Promise((r) => setTimeout(r, 300));
    expect(watch.frames.map((f) => f.type).filter((t) => !t.startsWith("app.installed") && t !== "hub.hello")).toEqual([
      "backend.health_changed",
    ]);
    // The asker hears of its own approval, and nothing else.
    expect(quiet.frames.map((f) => f.type)).toEqual(["hub.hello", "approval.raised"]);

    // Grants and refusals are security-log rows, one per app, event and reason.
    const granted = await securityRows(gw, "events.granted", "app:ev-watch");
    expect(granted.map((r) => r.subject).sort()).toEqual([
      "app.installed",
      "app.updated",
      "backend.health_changed",
      "install.progress",
    ]);
    const refused = await securityRows(gw, "events.refused", "app:ev-watch");
    expect(refused.map((r) => [r.subject, r.detail.reason]).sort()).toEqual([
      ["made.up", "unclassified"],
      ["security_log.appended", "not_declarable"],
    ]);
    await Promise.all([watch.close(), quiet.close()]);
    // A second connect within five minutes writes no second grant row.
    const again = await listen(gw, asApp(watchToken));
    await again.waitFor((f) => f.type === "hub.hello");
    expect((await securityRows(gw, "events.granted", "app:ev-watch")).length).toBe(4);
    await again.close();
  });

  it("an unclassified event is never delivered, to the owner or to an app that declared its name", async () => {
    const ownerSocket = await listen(gw, owner(gw));
    const watch = await listen(gw, asApp(watchToken));
    const result = await publish(gw, "made.up", { app: "x" });
    expect(result.delivered).toBe(0);
    await publish(gw, "app.installed", { app: "after-made-up" });
    await Promise.all([ownerSocket, watch].map((s) => s.waitFor((f) => f.data.app === "after-made-up")));
    for (const socket of [ownerSocket, watch]) expect(socket.frames.some((f) => f.type === "made.up")).toBe(false);
    await Promise.all([ownerSocket.close(), watch.close()]);
  });

  it("the platform's own events reach declared sockets and land in a subscribed app's inbox from @platform, identifiers only", async () => {
    const ownerSocket = await listen(gw, owner(gw));
    const watch = await listen(gw, asApp(watchToken));
    const quiet = await listen(gw, asApp(quietToken));
    await gw.fetch("/api/apps/message", { headers: asApp(watchToken) }); // drain
    await installApp(gw, writeApp(root, "ev-other", {}));
    for (const socket of [ownerSocket, watch]) {
      expect((await socket.waitFor((f) => f.type === "app.installed")).data).toEqual({ app: "ev-other" });
      expect(
        (
          await socket.waitFor(
            (f) => f.type === "backend.health_changed" && f.data.app === "ev-other" && f.data.healthy === true,
          )
        ).data,
      ).toEqual({
        app: "ev-other",
        running: true,
        healthy: true,
      });
    }
    // The owner hears that security-log rows were written: a number, no row.
    const appended = await ownerSocket.waitFor((f) => f.type === "security_log.appended");
    expect(Object.keys(appended.data)).toEqual(["seq"]);
    expect(watch.frames.some((f) => f.type === "security_log.appended")).toBe(false);
    expect(quiet.frames.map((f) => f.type)).toEqual(["hub.hello"]);
    const inbox = (await (await gw.fetch("/api/apps/message", { headers: asApp(watchToken) })).json()) as {
      messages: Array<{ from: string; body: unknown }>;
    };
    expect(inbox.messages).toContainEqual(
      expect.objectContaining({ from: "@platform", body: { event: "app.installed", data: { app: "ev-other" } } }),
    );
    // Subscribing to an owner-only event delivers nothing.
    expect(inbox.messages.every((m) => (m.body as { event: string }).event !== "security_log.appended")).toBe(true);
    await Promise.all([ownerSocket.close(), watch.close(), quiet.close()]);
  }, 60_000);

  it("a confined backend opens its socket through its sandbox's gateway relay with the token the proxy handed it", async () => {
    await installApp(gw, wsProbeApp(root));
    await waitHealthy(gw, "ev-probe");
    const probe = (await (await gw.fetch("/apps/ev-probe/api/ws-probe")).json()) as {
      status: number;
      frame: Frame | null;
      error?: string;
    };
    expect(probe.error).toBeUndefined();
    expect(probe.status).toBe(101);
    expect(probe.frame).toEqual({ type: "hub.hello", data: { principal: "app:ev-probe", events: "app.installed" } });
  }, 60_000);

  it("an app that raises an approval hears it raised and answered on its own socket; another app hears neither", async () => {
    await installApp(gw, writeApp(root, "ev-asker", { approvals: true, events: [] }));
    const askerToken = await appTokenOf(gw, "ev-asker");
    const asker = await listen(gw, asApp(askerToken));
    const quiet = await listen(gw, asApp(quietToken));
    const ownerSocket = await listen(gw, owner(gw));
    await asker.waitFor((f) => f.type === "hub.hello");
    const raised = await gw.fetch("/api/approvals", {
      method: "POST",
      headers: { ...asApp(askerToken), "content-type": "application/json" },
      body: JSON.stringify({
        kind: "notes.publish",
        title: "Publish a note",
        action: { route: "POST /notes/publish", target: "n1", arguments_digest: `sha256:${"0".repeat(64)}` },
      }),
    });
    expect(raised.status, await raised.clone().text()).toBe(201);
    const id = ((await raised.json()) as { approval: { id: string } }).approval.id;
    const expected = { id, asked_by: "app:ev-asker", kind: "notes.publish" };
    expect((await asker.waitFor((f) => f.type === "approval.raised")).data).toEqual(expected);
    expect((await ownerSocket.waitFor((f) => f.type === "approval.raised")).data).toEqual(expected);
    const denied = await gw.fetch(`/api/approvals/${id}/deny`, {
      method: "POST",
      body: "{}",
      headers: { "content-type": "application/json" },
    });
    expect(denied.status).toBe(200);
    expect((await asker.waitFor((f) => f.type === "approval.answered")).data).toEqual({
      ...expected,
      decision: "denied",
    });
    await ownerSocket.waitFor((f) => f.type === "approval.answered");
    expect(quiet.frames.map((f) => f.type)).toEqual(["hub.hello"]);
    await Promise.all([asker.close(), quiet.close(), ownerSocket.close()]);
  }, 60_000);

  it("an app page's socket from its opaque origin authenticates with the token as a subprotocol, which is never echoed", async () => {
    const socket = await listen(gw, {
      Origin: "null",
      "Sec-WebSocket-Protocol": `personalclaw.events.v1, personalclaw.bearer.${watchToken}`,
    });
    expect(socket.protocol).toBe("personalclaw.events.v1");
    expect((await socket.waitFor((f) => f.type === "hub.hello")).data.principal).toBe("app:ev-watch");
    await socket.close();
    // Offering subprotocols but not ours (a browser would fail a 101 that selects none, and the
    // token is never echoed): refused with the code that says what to offer.
    for (const offer of [`personalclaw.bearer.${watchToken}`, "chat, superchat"]) {
      const refused = await openWebSocket(gw.port, "/api/ws", {
        Origin: "null",
        ...(offer.startsWith("chat") ? asApp(watchToken) : {}),
        "Sec-WebSocket-Protocol": offer,
      });
      expect(refused.status).toBe(400);
      expect(!refused.ok && JSON.parse(refused.body).error.code).toBe("ws_subprotocol_required");
      expect(!refused.ok && refused.body).not.toContain(watchToken);
    }
  });

  it("an app holds at most 16 sockets; the next is refused with 429 ws_too_many_sockets and a row", async () => {
    const held = [];
    for (let i = 0; i < 16; i++) held.push(await listen(gw, asApp(quietToken)));
    const extra = await openWebSocket(gw.port, "/api/ws", asApp(quietToken));
    expect(extra.status).toBe(429);
    expect(!extra.ok && JSON.parse(extra.body).error.code).toBe("ws_too_many_sockets");
    expect((await securityRows(gw, "events.refused", "app:ev-quiet")).map((r) => r.detail.reason)).toContain(
      "too_many_sockets",
    );
    await Promise.all(held.map((socket) => socket.close()));
    // Closed sockets free their places.
    await expect
      .poll(async () => (await openWebSocket(gw.port, "/api/ws", asApp(quietToken))).status, { timeout: 5_000 })
      .toBe(101);
  });

  it("a cross-site WebSocket is refused: another Origin, an opaque origin with the owner's credential, a browser-marked cross-site request", async () => {
    const foreign = await openWebSocket(gw.port, "/api/ws", { ...owner(gw), Origin: "http://evil.example" });
    expect(foreign.ok).toBe(false);
    expect(foreign.status).toBe(403);
    expect(!foreign.ok && JSON.parse(foreign.body).error.code).toBe("ws_origin_not_allowed");
    const opaqueOwner = await openWebSocket(gw.port, "/api/ws", {
      Origin: "null",
      "Sec-WebSocket-Protocol": `personalclaw.bearer.${gw.token}`,
    });
    expect(opaqueOwner.status).toBe(403);
    expect(!opaqueOwner.ok && JSON.parse(opaqueOwner.body).error.code).toBe("ws_origin_not_allowed");
    const marked = await openWebSocket(gw.port, "/api/ws", {
      ...owner(gw),
      Origin: "http://evil.example",
      "Sec-Fetch-Site": "cross-site",
    });
    expect(marked.status).toBe(403);
    expect(!marked.ok && JSON.parse(marked.body).error.code).toBe("origin_not_allowed");
    const own = await listen(gw, { ...owner(gw), Origin: gw.base });
    await own.waitFor((f) => f.type === "hub.hello");
    await own.close();
    const rows = await securityRows(gw, "ws_origin_not_allowed");
    expect(rows.map((r) => r.detail.reason).sort()).toEqual(["foreign_origin", "opaque_origin_without_app_token"]);
  });

  it("narrowing the declaration by update stops delivery on the open socket, and the refusal is logged once", async () => {
    const watch = await listen(gw, asApp(watchToken));
    await watch.waitFor((f) => f.type === "hub.hello");
    await publish(gw, "backend.health_changed", { app: "before-narrowing", running: true, healthy: true });
    await watch.waitFor((f) => f.data.app === "before-narrowing");
    await updateApp(gw, "ev-watch", writeApp(root, "ev-watch", { events: ["app.installed"] }, "0.2.0"));
    await publish(gw, "backend.health_changed", { app: "after-narrowing", running: true, healthy: true });
    await publish(gw, "backend.health_changed", { app: "after-narrowing-2", running: true, healthy: true });
    await publish(gw, "app.installed", { app: "narrowing-sentinel" });
    await watch.waitFor((f) => f.data.app === "narrowing-sentinel");
    expect(watch.frames.filter((f) => String(f.data.app).startsWith("after-narrowing"))).toEqual([]);
    expect(watch.frames.some((f) => f.type === "app.updated")).toBe(false);
    const narrowed = (await securityRows(gw, "events.refused", "app:ev-watch")).filter(
      (r) => r.detail.reason === "narrowed",
    );
    expect(narrowed.filter((r) => r.subject === "backend.health_changed")).toHaveLength(1);
    await watch.close();
  }, 90_000);

  it("disabling an app closes its socket at once, and a reconnect is refused", async () => {
    await waitHealthy(gw, "ev-watch");
    const token = await appTokenOf(gw, "ev-watch");
    const watch = await listen(gw, asApp(token));
    await watch.waitFor((f) => f.type === "hub.hello");
    const ownerSocket = await listen(gw, owner(gw));
    const disabled = await gw.fetch("/api/apps/ev-watch/disable", {
      method: "POST",
      body: "{}",
      headers: { "content-type": "application/json" },
    });
    expect(disabled.status).toBe(200);
    expect(await Promise.race([watch.closed, new Promise((r) => setTimeout(() => r("still open"), 3000))])).toBe(4403);
    expect((await ownerSocket.waitFor((f) => f.type === "app.disabled")).data).toEqual({ app: "ev-watch" });
    const again = await openWebSocket(gw.port, "/api/ws", asApp(token));
    expect(again.ok).toBe(false);
    expect(again.status).toBe(403);
    await ownerSocket.close();
  }, 60_000);

  it("uninstalling an app closes its socket at once and tells the owner", async () => {
    const token = await appTokenOf(gw, "ev-other");
    const other = await listen(gw, asApp(token));
    await other.waitFor((f) => f.type === "hub.hello");
    const ownerSocket = await listen(gw, owner(gw));
    const removed = await gw.fetch("/api/apps/ev-other", {
      method: "DELETE",
      body: "{}",
      headers: { "content-type": "application/json" },
    });
    expect(removed.status).toBe(200);
    expect(await Promise.race([other.closed, new Promise((r) => setTimeout(() => r("still open"), 3000))])).toBe(4403);
    expect((await ownerSocket.waitFor((f) => f.type === "app.uninstalled")).data).toEqual({ app: "ev-other" });
    expect((await openWebSocket(gw.port, "/api/ws", asApp(token))).ok).toBe(false);
    await ownerSocket.close();
  }, 60_000);
});

describe("the dashboard subscribes once and updates itself", () => {
  let gw: RunningGateway;
  let browser: Browser;
  let root: string;
  let foreignSite: Server;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "pc-events-dash-"));
    [gw, browser] = await Promise.all([startGateway(), launchChromium()]);
    foreignSite = createServer((req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(`<!doctype html><script>
        const ws = new WebSocket("ws://127.0.0.1:${gw.port}/api/ws");
        window.result = new Promise((resolve) => { ws.onopen = () => resolve("open"); ws.onclose = () => resolve("refused"); });
      </script>`);
    });
    await new Promise<void>((resolve) => foreignSite.listen(0, "127.0.0.1", () => resolve()));
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await gw?.stop();
    foreignSite?.close();
    if (gw) removeHome(gw.home);
    rmSync(root, { recursive: true, force: true });
  });

  it("shows a backend turning healthy, a new security-log row and a new device without a reload; an app page hears its events; says when it is offline", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(String(error)));
    await page.addInitScript(() => {
      document.addEventListener("securitypolicyviolation", (e) =>
        ((window as unknown as { v: string[] }).v ??= []).push(`${e.violatedDirective} ${e.blockedURI}`),
      );
    });
    await page.goto(gw.url);
    await page.waitForSelector("#live-indicator[data-state=live]", { timeout: 15_000 });
    // One socket for the whole page.
    const sockets = await page.evaluate(
      () => performance.getEntriesByType("resource").filter((e) => e.name.includes("/api/ws")).length,
    );
    expect(sockets).toBeLessThanOrEqual(1);
    await installApp(gw, writeApp(root, "ev-dash", {}));
    const item = page.locator("li", { hasText: "ev-dash" }).first();
    await item.locator(".badge-ok", { hasText: "healthy" }).waitFor({ timeout: 20_000 });
    // The security log and the devices list follow too (each a page of its own, in the same document).
    await page.locator("#nav").getByRole("link", { name: "Security log" }).click();
    await page.locator("#security-log tbody tr[data-kind=app_installed]").first().waitFor({ timeout: 10_000 });
    await page.locator("#nav").getByRole("link", { name: "Devices" }).click();
    const devices = page.locator("#devices table tbody tr");
    await devices.first().waitFor();
    const before = await devices.count();
    const minted = await runCli(["token", "--home", gw.home]);
    expect(minted.code, minted.stderr).toBe(0);
    await expect.poll(() => devices.count(), { timeout: 10_000 }).toBe(before + 1);
    // The page was never reloaded: the same document that opened the socket shows it all.
    expect(await page.evaluate(() => performance.getEntriesByType("navigation").length)).toBe(1);
    expect(await page.evaluate(() => (window as unknown as { v?: string[] }).v ?? [])).toEqual([]);
    expect(errors).toEqual([]);

    // A cross-site page in the same browser (the owner's cookie is in it) cannot open the socket.
    const cookies = await context.cookies(gw.base);
    expect(cookies.length).toBeGreaterThan(0);
    const foreign = await context.newPage();
    const { port } = foreignSite.address() as { port: number };
    await foreign.goto(`http://localhost:${port}/`);
    expect(await foreign.evaluate(() => (window as unknown as { result: Promise<string> }).result)).toBe("refused");

    // An app's UI page, sandboxed in an opaque origin, hears its declared events through the SDK's browser client.
    await installApp(gw, appPageFolder(root));
    await waitHealthy(gw, "ev-page");
    const appPage = await context.newPage();
    const appErrors: string[] = [];
    appPage.on("pageerror", (error) => appErrors.push(String(error)));
    await appPage.goto(`${gw.base}/apps/ev-page/`);
    expect(new URL(appPage.url()).search).toContain("app_token=");
    await appPage.waitForFunction(() => document.body.dataset.hello === "app:ev-page", undefined, { timeout: 10_000 });
    expect(await appPage.evaluate(() => window.origin)).toBe("null");
    await publish(gw, "config.changed", { field: "owner-only" });
    await publish(gw, "app.installed", { app: "page-check" });
    await appPage.waitForFunction(
      () => document.getElementById("frames")!.textContent!.includes("app.installed:page-check"),
      undefined,
      { timeout: 10_000 },
    );
    expect(await appPage.locator("#frames").textContent()).toBe("app.installed:page-check");
    expect(appErrors).toEqual([]);

    await gw.stop();
    await page.waitForSelector("#live-indicator[data-state=offline]", { timeout: 10_000 });
    expect(await page.locator("#live-indicator").textContent()).toBe("Offline — reconnecting");
    await context.close();
  }, 120_000);
});
