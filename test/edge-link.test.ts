// Edge mode's link, end to end: the built worker under Miniflare with the bindings wrangler.jsonc
// declares (as `wrangler dev` runs it), in edge mode on https://claw.example (TLS from a test CA,
// reached through PERSONALCLAW_EDGE_CONNECT_TO), and a real gateway's bridge on this machine
// paired with `personalclaw edge pair` and dialling out with `personalclaw start --edge`.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";
import { request as httpsRequest } from "node:https";
import { randomBytes } from "node:crypto";
import { connect, createServer as createNetServer, type Socket } from "node:net";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Miniflare } from "miniflare";
import { startEdgeWorker } from "./helpers/edge-worker";
import { fetch as undiciFetch, WebSocket, type Dispatcher } from "undici";
import { makeTestCertificates, type TestCertificates } from "./helpers/test-ca";
import {
  eventually,
  makeHome,
  removeHome,
  repoRoot,
  runCliWithInput,
  startGateway,
  type RunningGateway,
} from "./helpers/gateway";
import { edgeDispatcher } from "../host-bridge/edge/edge-dispatcher";
import { startEdgeLink, type EdgeLink } from "../host-bridge/edge/edge-link";
import { EdgeRecordSchema, newMachineKey, signChallenge, type EdgeRecord } from "../host-bridge/edge/edge-record";
import type { RelayPlaces } from "../host-bridge/edge/link-relay";
import { runtimeDir } from "../host-bridge/home";
import { GATEWAY_SOCKET_FOLDER, GATEWAY_SOCKET_NAME } from "../kernel/contracts/backend-slots";
import {
  LINK_PATH,
  LINK_PING_INTERVAL_MS,
  LINK_SILENT_CLOSE,
  LINK_SILENT_MS,
  LINK_SUBPROTOCOL,
  MachinesAnswerSchema,
  machineIdOf,
} from "../kernel/contracts/bridge-link";

const ORIGIN = "https://claw.example";
const PAIRING_SECRET = randomBytes(24).toString("hex");
const INTERNAL_SECRET = randomBytes(32).toString("hex");

let certs: TestCertificates;
let edge: Miniflare;
let edgePort: number;
let dispatcher: Dispatcher;
let cliEnv: NodeJS.ProcessEnv;
let home: string;
let record: EdgeRecord;
let gateway: RunningGateway | null = null;
let owner = "";

/** A request to the edge by its public name. */
async function edgeFetch(
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
) {
  const send = () => undiciFetch(`${ORIGIN}${path}`, { ...init, dispatcher, redirect: "manual" });
  // Each request has a connection of its own (no reuse races the server closing it). One the edge's
  // server reset or closed before a byte of answer (Miniflare under load) carried nothing back: the
  // request is sent once more. Any answer, or any other failure, stands.
  const answer = await send().catch((error: unknown) => {
    const cause = (error as { cause?: { code?: string; socket?: { bytesRead?: number } } }).cause;
    const unanswered =
      cause?.code === "ECONNRESET" || (cause?.code === "UND_ERR_SOCKET" && cause.socket?.bytesRead === 0);
    if (!unanswered) throw error;
    return send();
  });
  const text = await answer.text();
  let body: { error?: { code?: string } } & Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    // not JSON
  }
  return { status: answer.status, body };
}

/** An owner call whose handler asks the bridge (GET /api/secrets: the bridge's POST /secrets/list). */
function ownerBridgeCall() {
  return edgeFetch("/api/secrets", { headers: { Authorization: `Bearer ${owner}` } });
}

/** A link of this test process's own, with this machine's key (or `as`'s), to `bridgeUrl` (and its relays to `relay`). */
function testLink(bridgeUrl: string, secret: string, serves = true, relay?: RelayPlaces, as = record): EdgeLink {
  return startEdgeLink({ record: as, bridgeUrl, secret, dispatcher, log: () => undefined, serves, relay });
}

const NOTES_SOURCE = join(repoRoot, "apps", "fixtures", "node-notes");

/** An owner's request to the edge (the sign-in link's token as Bearer; writes carry the public Origin). */
function ownerFetch(path: string, init: { method?: string; body?: unknown } = {}) {
  return edgeFetch(path, {
    method: init.method,
    headers: {
      Authorization: `Bearer ${owner}`,
      ...(init.body === undefined ? {} : { "Content-Type": "application/json", Origin: ORIGIN }),
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
}

/** node-notes' echo through the edge's proxy: what its backend on this machine received. */
function echoThroughEdge() {
  return ownerFetch("/apps/node-notes/api/echo");
}

/** Opens a link socket as `as` and proves its key; resolves once welcomed, with how the socket later closes. */
async function provenLink(as: EdgeRecord, serves: boolean): Promise<{ ws: WebSocket; closed: Promise<number> }> {
  const ws = new WebSocket(`wss://claw.example${LINK_PATH}?machine=${as.machine}`, {
    protocols: [LINK_SUBPROTOCOL],
    dispatcher,
  });
  const closed = new Promise<number>((resolvePromise) => ws.addEventListener("close", (e) => resolvePromise(e.code)));
  await new Promise<void>((resolvePromise) =>
    ws.addEventListener("message", (event) => {
      const frame = JSON.parse(String(event.data)) as { type: string; nonce?: string };
      if (frame.type === "challenge")
        ws.send(
          JSON.stringify({ type: "hello", machine: as.machine, signature: signChallenge(as, frame.nonce!), serves }),
        );
      if (frame.type === "welcome") resolvePromise();
    }),
  );
  return { ws, closed };
}

/** Opens a raw link socket and answers its challenge with `hello(nonce)`; resolves with how it ended or was welcomed. */
function rawLink(machine: string, hello: (nonce: string) => unknown): Promise<{ welcomed: boolean; code: number }> {
  return new Promise((resolvePromise) => {
    const ws = new WebSocket(`wss://claw.example${LINK_PATH}?machine=${machine}`, {
      protocols: [LINK_SUBPROTOCOL],
      dispatcher,
    });
    ws.addEventListener("message", (event) => {
      const frame = JSON.parse(String(event.data)) as { type: string; nonce?: string };
      if (frame.type === "challenge") ws.send(JSON.stringify(hello(frame.nonce!)));
      if (frame.type === "welcome") {
        resolvePromise({ welcomed: true, code: 0 });
        ws.close(1000);
      }
    });
    ws.addEventListener("close", (event) => resolvePromise({ welcomed: false, code: event.code }));
  });
}

/** A stand-in bridge on loopback: counts requests, answers each with `answer` (or never, when null). */
function standInBridge(answer: string | null): Promise<{ server: Server; url: string; seen: IncomingMessage[] }> {
  const seen: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    seen.push(req);
    if (answer !== null) res.writeHead(200, { "Content-Type": "application/json" }).end(answer);
  });
  return new Promise((resolvePromise) =>
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      resolvePromise({ server, url: `http://127.0.0.1:${port}`, seen });
    }),
  );
}

/** A POST an app backend on the machine could make to its gateway: the gateway's socket in the runtime folder. */
function throughAppDoor(path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolvePromise, reject) => {
    const req = httpRequest(
      {
        socketPath: join(runtimeDir(home, process.env.XDG_RUNTIME_DIR), GATEWAY_SOCKET_FOLDER, GATEWAY_SOCKET_NAME),
        path,
        method: "POST",
        headers: { ...headers, "Content-Type": "application/json" },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolvePromise({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      },
    );
    req.on("error", reject);
    req.end("{}");
  });
}

/** A TCP path to the edge whose open connections a test can freeze: no byte crosses either way, and none closes. */
function freezablePath(): Promise<{ port: number; freeze(): void; connections(): number; close(): void }> {
  const carried: Socket[] = [];
  let count = 0;
  const server = createNetServer((client) => {
    count += 1;
    const upstream = connect(edgePort, "127.0.0.1");
    client.pipe(upstream).on("error", () => undefined);
    upstream.pipe(client).on("error", () => undefined);
    carried.push(client, upstream);
  });
  return new Promise((resolvePromise) =>
    server.listen(0, "127.0.0.1", () =>
      resolvePromise({
        port: (server.address() as { port: number }).port,
        freeze: () => {
          for (const socket of carried.splice(0)) {
            socket.unpipe();
            socket.pause();
          }
        },
        connections: () => count,
        close: () => {
          server.close();
          for (const socket of carried) socket.destroy();
        },
      }),
    ),
  );
}

/**
 * Makes `call` while `link` is the machine's link, closes the link once `stalling` (which never
 * answers) received what the call sent, and answers how the call ended and how long after the close.
 */
async function closeLinkMidCall<T>(
  link: EdgeLink,
  stalling: { server: Server; seen: IncomingMessage[] },
  call: () => Promise<T>,
): Promise<{ answer: T; afterClose: number }> {
  try {
    await link.linked();
    const pending = call();
    await eventually(
      async () => stalling.seen.length,
      (n) => n > 0,
      10_000,
    );
    const closedAt = Date.now();
    link.stop();
    const answer = await pending;
    return { answer, afterClose: Date.now() - closedAt };
  } finally {
    link.stop();
    stalling.server.closeAllConnections();
    stalling.server.close();
  }
}

beforeAll(async () => {
  certs = makeTestCertificates({ names: ["claw.example"] });
  ({ edge, port: edgePort } = await startEdgeWorker({
    repoRoot,
    origin: ORIGIN,
    certs,
    pairingSecret: PAIRING_SECRET,
    internalSecret: INTERNAL_SECRET,
  }));
  // The suite pauses between requests (CLI runs, gateway starts): a connection is not kept idle
  // for a later request, which could go out on it just as the edge closes it.
  dispatcher = edgeDispatcher(`127.0.0.1:${edgePort}`, certs.caPem, 0)!;
  home = makeHome("pc-edge-");
  cliEnv = {
    PERSONALCLAW_HOME: home,
    PERSONALCLAW_EDGE_CONNECT_TO: `127.0.0.1:${edgePort}`,
    NODE_EXTRA_CA_CERTS: certs.caPath,
  };
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await edge?.dispose();
  removeHome(home);
});

describe("pairing a machine with an edge", () => {
  it("a wrong pairing secret pairs nothing", async () => {
    // Three guesses, each with a fresh key: one security-log row and a count, not one row each (checked below).
    for (let guess = 0; guess < 3; guess++) {
      const answer = await edgeFetch("/api/edge/pair", {
        method: "POST",
        headers: { "Content-Type": "application/json", Origin: ORIGIN },
        body: JSON.stringify({ pairing_secret: `not-the-secret-${guess}`, public_key: newMachineKey().publicKeyHex }),
      });
      expect([answer.status, answer.body.error?.code]).toEqual([403, "edge_pairing_refused"]);
    }
  });

  it("`edge pair` reads the secret from stdin, pairs the machine with its own key and keeps the pairing 0600", async () => {
    const paired = await runCliWithInput(["edge", "pair", ORIGIN, "--json"], `${PAIRING_SECRET}\n`, cliEnv);
    expect(paired.code, paired.stderr).toBe(0);
    const file = join(home, "edge.json");
    record = EdgeRecordSchema.parse(JSON.parse(readFileSync(file, "utf8")));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(paired.stdout)).toMatchObject({ origin: ORIGIN, machine: record.machine });
    expect(paired.stdout + paired.stderr).not.toContain(PAIRING_SECRET);
  });

  it("the secret is spent: a second machine presenting it is refused", async () => {
    const other = makeHome("pc-edge-other-");
    try {
      const again = await runCliWithInput(["edge", "pair", ORIGIN, "--json"], PAIRING_SECRET, {
        ...cliEnv,
        PERSONALCLAW_HOME: other,
      });
      expect(again.code).toBe(1);
      expect(JSON.parse(again.stdout)).toMatchObject({ error: { code: "edge_pairing_refused" } });
    } finally {
      removeHome(other);
    }
  });
});

describe("the link", () => {
  it("`start --edge` links the machine's real bridge; `token --edge` mints a sign-in link on the public URL", async () => {
    gateway = await startGateway({ home, args: ["--edge"], env: cliEnv, detached: true });
    const token = await runCliWithInput(["token", "--edge", "--json"], "", cliEnv);
    expect([token.code, token.stdout, token.stderr]).toEqual([0, expect.anything(), ""]);
    const url = new URL((JSON.parse(token.stdout) as { url: string }).url);
    expect(url.origin).toBe(ORIGIN);
    owner = url.searchParams.get("token")!;
    const listed = await eventually(ownerBridgeCall, (a) => a.status === 200, 30_000);
    expect(listed).toMatchObject({ status: 200, body: { secrets: [] } });
    // The machine's own gateway is no edge: the pairing secret pairs nothing there.
    const local = await gateway.fetch("/api/edge/pair", {
      method: "POST",
      owner: false,
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ pairing_secret: PAIRING_SECRET, public_key: newMachineKey().publicKeyHex }),
    });
    expect([local.status, ((await local.json()) as { error: { code: string } }).error.code]).toEqual([
      404,
      "edge_mode_off",
    ]);
  }, 90_000);

  it("an app installed at the edge runs on the machine: its backend answers through the link, signed, and its UI loads", async () => {
    const preview = await ownerFetch("/api/apps/preview", { method: "POST", body: { source: NOTES_SOURCE } });
    expect(preview.status, JSON.stringify(preview.body)).toBe(200);
    const installed = await ownerFetch("/api/apps", {
      method: "POST",
      body: { source: NOTES_SOURCE, consent: preview.body.digest },
    });
    expect(installed.status, JSON.stringify(installed.body)).toBe(200);
    // The backend's health reached the edge's record over the link: the machine's bridge reported it there.
    const row = await eventually(
      () => ownerFetch("/api/apps/node-notes"),
      (a) => (a.body as { backend?: { healthy?: boolean } }).backend?.healthy === true,
      30_000,
    );
    expect(row.body).toMatchObject({ backend: { running: true, healthy: true } });
    const echo = await echoThroughEdge();
    expect(echo.status).toBe(200);
    expect(echo.body).toMatchObject({
      method: "GET",
      target: "/api/echo",
      headers: { "x-personalclaw-app": "node-notes", "x-personalclaw-proxy": true, cookie: null },
    });
    // A body crosses whole: the backend verified the signature over it and kept the note.
    const text = `from a phone ${randomBytes(4).toString("hex")}`;
    const written = await ownerFetch("/apps/node-notes/api/notes", { method: "POST", body: { text } });
    expect(written.status, JSON.stringify(written.body)).toBeLessThan(300);
    const notes = await ownerFetch("/apps/node-notes/api/notes");
    expect((notes.body as unknown as { notes: Array<{ text: string }> }).notes.map((n) => n.text)).toContain(text);
    // The UI's files come from the installed copy on the machine, checked against the bytes listed at install.
    const page = await undiciFetch(`${ORIGIN}/apps/node-notes/`, {
      dispatcher,
      headers: { Authorization: `Bearer ${owner}` },
    });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("sandbox");
    expect(await page.text()).toBe(readFileSync(join(NOTES_SOURCE, "ui", "index.html"), "utf8"));
    const script = await undiciFetch(`${ORIGIN}/apps/node-notes/app.js`, {
      dispatcher,
      headers: { Authorization: `Bearer ${owner}` },
    });
    expect([script.status, await script.text()]).toEqual([
      200,
      readFileSync(join(NOTES_SOURCE, "ui", "app.js"), "utf8"),
    ]);
    const absent = await ownerFetch("/apps/node-notes/server.mjs");
    expect([absent.status, absent.body.error?.code]).toEqual([404, "app_ui_not_found"]);
    // The records are the edge's: the machine's own gateway never heard of the app.
    expect((await gateway!.fetch("/api/apps/node-notes")).status).toBe(404);
  }, 120_000);

  it("an app on the machine raises an approval at the edge, and the owner's yes there reaches it", async () => {
    const source = join(repoRoot, "test", "fixtures", "backend-apps", "approval-asker");
    const preview = await ownerFetch("/api/apps/preview", { method: "POST", body: { source } });
    expect(preview.status, JSON.stringify(preview.body)).toBe(200);
    const installed = await ownerFetch("/api/apps", { method: "POST", body: { source, consent: preview.body.digest } });
    expect(installed.status, JSON.stringify(installed.body)).toBe(200);
    await eventually(
      () => ownerFetch("/api/apps/approval-asker"),
      (a) => (a.body as { backend?: { healthy?: boolean } }).backend?.healthy === true,
      30_000,
    );
    // The backend calls its gateway at the address it always has; under --edge that call crosses the link.
    const asked = await ownerFetch("/apps/approval-asker/api/publish", { method: "POST", body: { text: "from afar" } });
    expect(asked.status, JSON.stringify(asked.body)).toBe(202);
    const id = (asked.body as unknown as { approval: { id: string } }).approval.id;
    const pending = await ownerFetch(`/api/approvals/${id}`);
    expect(pending.body).toMatchObject({ approval: { state: "pending", asked_by: "app:approval-asker" } });
    const approved = await ownerFetch(`/api/approvals/${id}/approve`, { method: "POST", body: { scope: "once" } });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    const published = await eventually(
      () => ownerFetch("/apps/approval-asker/api/published"),
      (a) => (a.body as unknown as { published: Array<{ text: string }> }).published.length > 0,
      30_000,
    );
    expect((published.body as unknown as { published: unknown[] }).published).toEqual([
      { text: "from afar", id, by: "you" },
    ]);
  }, 120_000);

  it("the edge's security log verifies against the anchor the machine keeps of it, apart from its own log's", async () => {
    const edgeAnchorFile = join(home, "edge_sel_anchor.json");
    const held = await eventually(
      async () =>
        existsSync(edgeAnchorFile) ? (JSON.parse(readFileSync(edgeAnchorFile, "utf8")) as { seq: number }) : null,
      (a) => a !== null && a.seq > 1,
      15_000,
    );
    expect(held!.seq).toBeGreaterThan(1);
    expect(readFileSync(edgeAnchorFile, "utf8")).not.toBe(readFileSync(join(home, "sel_anchor.json"), "utf8"));
    const verified = await ownerFetch("/api/security/events/verify");
    expect(verified.body).toMatchObject({ ok: true });
    const cli = await runCliWithInput(["security", "verify", "--edge", "--json"], "", cliEnv);
    expect([cli.code, cli.stderr]).toEqual([0, ""]);
    expect(JSON.parse(cli.stdout)).toMatchObject({ ok: true });
    expect((JSON.parse(cli.stdout) as { checked: number }).checked).toBeGreaterThanOrEqual(held!.seq);
    // The machine's own log still verifies against its own anchor.
    const local = await runCliWithInput(["security", "verify", "--json"], "", cliEnv);
    expect([local.code, JSON.parse(local.stdout).ok]).toEqual([0, true]);
  });

  it("a second machine pairs with a one-time code the signed-in owner created, and the code pairs once", async () => {
    const created = await ownerFetch("/api/edge/pairing-codes", { method: "POST", body: {} });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const code = String(created.body.code);
    expect(code).toMatch(/^[A-Z2-7]{4}(-[A-Z2-7]{4}){4}$/);
    const second = makeHome("pc-edge-second-");
    const third = makeHome("pc-edge-third-");
    try {
      // Typed as a person would: lower case, spaces between the groups.
      const typed = `${code.toLowerCase().replace(/-/g, " - ")}\n`;
      const paired = await runCliWithInput(["edge", "pair", ORIGIN, "--code", "--json"], typed, {
        ...cliEnv,
        PERSONALCLAW_HOME: second,
      });
      expect(paired.code, paired.stdout + paired.stderr).toBe(0);
      const secondRecord = EdgeRecordSchema.parse(JSON.parse(readFileSync(join(second, "edge.json"), "utf8")));
      expect(secondRecord.machine).not.toBe(record.machine);
      // The new machine's own key links it (a link that serves nothing: the edge's calls stay the first machine's).
      const link = testLink("", "", false, undefined, secondRecord);
      try {
        await link.linked();
      } finally {
        link.stop();
      }
      const reused = await runCliWithInput(["edge", "pair", ORIGIN, "--code", "--json"], `${code}\n`, {
        ...cliEnv,
        PERSONALCLAW_HOME: third,
      });
      expect([reused.code, JSON.parse(reused.stdout).error.code]).toEqual([1, "edge_pairing_code_refused"]);
      expect(existsSync(join(third, "edge.json"))).toBe(false);
    } finally {
      removeHome(second);
      removeHome(third);
    }
    const page = await ownerFetch("/api/security/events?limit=50");
    const events = (page.body as unknown as { events: Array<{ kind: string; detail?: Record<string, unknown> }> })
      .events;
    expect(events.some((e) => e.kind === "edge_pairing_code_created")).toBe(true);
    expect(events.filter((e) => e.kind === "edge_machine_paired").map((e) => e.detail?.paired_by ?? "secret")).toEqual(
      expect.arrayContaining(["pairing_code", "secret"]),
    );
    expect(events.some((e) => e.kind === "edge_pairing_refused" && e.detail?.reason === "the code was used")).toBe(
      true,
    );
  }, 60_000);

  it("only the signed-in owner creates a code, and a code not created here pairs nothing", async () => {
    const nobody = await edgeFetch("/api/edge/pairing-codes", {
      method: "POST",
      headers: { "Content-Type": "application/json", Origin: ORIGIN },
      body: "{}",
    });
    expect([nobody.status, nobody.body.error?.code]).toEqual([403, "session_required"]);
    expect(nobody.body).not.toHaveProperty("code");
    const elsewhere = await edgeFetch("/api/edge/pairing-codes", {
      method: "POST",
      headers: { "Content-Type": "application/json", Origin: "https://evil.example", Authorization: `Bearer ${owner}` },
      body: "{}",
    });
    expect([elsewhere.status, elsewhere.body.error?.code]).toEqual([403, "origin_not_allowed"]);
    // The internal credential from the internet makes no code either.
    const internal = await edgeFetch("/api/edge/pairing-codes", {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Internal-Secret": INTERNAL_SECRET },
      body: "{}",
    });
    expect(internal.status).toBe(403);
    expect(internal.body).not.toHaveProperty("code");
    const madeUp = await edgeFetch("/api/edge/pair", {
      method: "POST",
      headers: { "Content-Type": "application/json", Origin: ORIGIN },
      body: JSON.stringify({ pairing_code: "AAAA-BBBB-CCCC-DDDD-EEEE", public_key: newMachineKey().publicKeyHex }),
    });
    expect([madeUp.status, madeUp.body.error?.code]).toEqual([403, "edge_pairing_code_refused"]);
  });

  it("the owner forgets a lost machine: its open link closes 1008, it links and pairs no more, the machine running the apps is untouched", async () => {
    // A machine paired by a code, linked (a link that serves nothing, as a second machine's is).
    const created = await ownerFetch("/api/edge/pairing-codes", { method: "POST", body: {} });
    const key = newMachineKey();
    const lost: EdgeRecord = {
      ...record,
      machine: await machineIdOf(key.publicKeyHex),
      private_key: key.privateKeyPem,
    };
    const paired = await edgeFetch("/api/edge/pair", {
      method: "POST",
      headers: { "Content-Type": "application/json", Origin: ORIGIN },
      body: JSON.stringify({ pairing_code: created.body.code, public_key: key.publicKeyHex }),
    });
    expect(paired.status, JSON.stringify(paired.body)).toBe(201);
    const { closed } = await provenLink(lost, false);
    const listed = await ownerFetch("/api/edge/machines");
    expect(MachinesAnswerSchema.safeParse(listed.body).error?.issues ?? []).toEqual([]);
    const machines = listed.body.machines as Array<Record<string, unknown>>;
    expect(machines.find((m) => m.machine === lost.machine)).toMatchObject({
      paired_by: "pairing_code",
      runs_apps: false,
      connected: true,
      forgotten_at: null,
    });
    expect(machines.find((m) => m.machine === record.machine)).toMatchObject({ runs_apps: true, connected: true });

    // Nobody but the signed-in owner forgets a machine.
    const anonymous = await edgeFetch(`/api/edge/machines/${lost.machine}/forget`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Origin: ORIGIN },
      body: "{}",
    });
    expect([anonymous.status, anonymous.body.error?.code]).toEqual([403, "session_required"]);
    const forgot = await ownerFetch(`/api/edge/machines/${lost.machine}/forget`, { method: "POST", body: {} });
    expect(forgot.status, JSON.stringify(forgot.body)).toBe(200);
    expect(await closed).toBe(1008);
    const after = (forgot.body.machines as Array<Record<string, unknown>>).find((m) => m.machine === lost.machine)!;
    expect(after).toMatchObject({ connected: false, runs_apps: false });
    expect(after.forgotten_at).toEqual(expect.any(String));
    // Its key links no more (refused before any upgrade), pairs no more, and cannot be forgotten twice.
    expect(
      await rawLink(lost.machine, (nonce) => ({
        type: "hello",
        machine: lost.machine,
        signature: signChallenge(lost, nonce),
        serves: false,
      })),
    ).toMatchObject({ welcomed: false });
    const again = await ownerFetch("/api/edge/pairing-codes", { method: "POST", body: {} });
    const repaired = await edgeFetch("/api/edge/pair", {
      method: "POST",
      headers: { "Content-Type": "application/json", Origin: ORIGIN },
      body: JSON.stringify({ pairing_code: again.body.code, public_key: key.publicKeyHex }),
    });
    expect([repaired.status, repaired.body.error?.code]).toEqual([403, "edge_pairing_code_refused"]);
    const twice = await ownerFetch(`/api/edge/machines/${lost.machine}/forget`, { method: "POST", body: {} });
    expect([twice.status, twice.body.error?.code]).toEqual([403, "edge_machine_unknown"]);
    // The machine that runs the apps still answers the edge's calls.
    expect((await ownerBridgeCall()).status).toBe(200);
    const events = (await ownerFetch("/api/security/events?kind=edge_machine_forgotten")).body as unknown as {
      events: Array<{ detail?: Record<string, unknown> }>;
    };
    expect(events.events.map((e) => e.detail?.ran_apps)).toEqual([false]);
  }, 60_000);

  it("at the app door on the machine only an app token counts: the internal credential and an owner's token open nothing", async () => {
    for (const [carrier, headers] of [
      ["the internal credential", { "X-Internal-Secret": INTERNAL_SECRET, "X-PersonalClaw-Work": "cli:token" }],
      ["an owner's token", { Authorization: `Bearer ${owner}` }],
    ] as const) {
      const answer = await throughAppDoor("/api/auth/startup-link", headers);
      expect([carrier, answer.status, (JSON.parse(answer.body) as { error: { code: string } }).error.code]).toEqual([
        carrier,
        403,
        "backend_door_owner_credential",
      ]);
      expect(answer.body).not.toContain("token=");
    }
  });

  it("the edge is its public origin: Host without a port, https:// Origins only, the sign-in link bound to CF-Connecting-IP", async () => {
    const withPort = await undiciFetch(`${ORIGIN}:443/api/status`, {
      dispatcher,
      headers: { Host: "claw.example:443" },
    });
    expect(withPort.status).toBe(403);
    for (const origin of ["http://claw.example", "https://evil.example"]) {
      const write = await edgeFetch("/api/auth/logout", {
        method: "POST",
        headers: { "Content-Type": "application/json", Origin: origin, Authorization: `Bearer ${owner}` },
        body: "{}",
      });
      expect([origin, write.status, write.body.error?.code]).toEqual([origin, 403, "origin_not_allowed"]);
    }
    // A phone opens the link: it is exchanged for a Secure session cookie bound to Cloudflare's client address.
    const opened = await undiciFetch(`${ORIGIN}/?token=${owner}`, {
      dispatcher,
      redirect: "manual",
      headers: { "CF-Connecting-IP": "198.51.100.7", "Sec-Fetch-Site": "none" },
    });
    expect(opened.status).toBe(302);
    expect(opened.headers.get("location")).toBe("/");
    const cookies = opened.headers.getSetCookie();
    expect(cookies.some((c) => c.includes("; Secure;"))).toBe(true);
    const cookie = cookies.map((c) => c.split(";")[0]!).join("; ");
    const devices = await edgeFetch("/api/auth/sessions", {
      headers: { Cookie: cookie, "CF-Connecting-IP": "198.51.100.7" },
    });
    expect(devices.status).toBe(200);
    const rows = (devices.body as unknown as { sessions: Array<{ kind: string; first_address: string | null }> })
      .sessions;
    expect(rows.filter((r) => r.kind === "browser").map((r) => r.first_address)).toEqual(["198.51.100.7"]);
    // The same link from another address signs no one in.
    const elsewhere = await undiciFetch(`${ORIGIN}/api/status?token=${owner}`, {
      dispatcher,
      redirect: "manual",
      headers: { "CF-Connecting-IP": "203.0.113.9" },
    });
    const refusal = (await elsewhere.json()) as { error: { code: string; detail?: { reason?: string } } };
    expect([elsewhere.status, refusal.error.code, refusal.error.detail?.reason]).toEqual([
      403,
      "session_required",
      "link_used",
    ]);
    expect(elsewhere.headers.getSetCookie()).toEqual([]);
  });

  it("the edge's security log holds the pairing, the link and the refused guesses as one row", async () => {
    const page = await edgeFetch("/api/security/events", { headers: { Authorization: `Bearer ${owner}` } });
    expect(page.status).toBe(200);
    const events = (page.body as unknown as { events: Array<{ kind: string; detail?: { reason?: string } }> }).events;
    const refusedReasons = events
      .filter((e) => e.kind === "edge_pairing_refused" && String(e.detail?.reason).includes("pairing secret"))
      .map((e) => e.detail?.reason);
    expect(refusedReasons.sort()).toEqual(["not the pairing secret", "the pairing secret was spent"]);
    expect(events.map((e) => e.kind)).toEqual(expect.arrayContaining(["edge_machine_paired", "edge_link_connected"]));
  });

  it("the internal credential sent from the internet opens nothing, even with the edge's real value", async () => {
    const answer = await edgeFetch("/api/auth/startup-link", {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "X-Internal-Secret": INTERNAL_SECRET,
        "X-PersonalClaw-Work": "cli:token",
      },
      body: "{}",
    });
    expect([answer.status, answer.body.error?.code]).toEqual([403, "internal_credential_off_link"]);
    expect(answer.body).not.toHaveProperty("token");
  });

  it("an unpaired machine is refused before any upgrade, and a paired machine id with another key is closed 1008", async () => {
    const stranger = await machineIdOf(newMachineKey().publicKeyHex);
    const status = await new Promise<number>((resolvePromise, reject) => {
      const req = httpsRequest({
        host: "127.0.0.1",
        port: edgePort,
        servername: "claw.example",
        ca: certs.caPem,
        path: `${LINK_PATH}?machine=${stranger}`,
        headers: {
          Host: "claw.example",
          Connection: "Upgrade",
          Upgrade: "websocket",
          "Sec-WebSocket-Version": "13",
          "Sec-WebSocket-Key": randomBytes(16).toString("base64"),
          "Sec-WebSocket-Protocol": LINK_SUBPROTOCOL,
        },
      });
      req.on("response", (res) => resolvePromise(res.statusCode ?? 0));
      req.on("upgrade", () => resolvePromise(101));
      req.on("error", reject);
      req.end();
    });
    expect(status).toBe(403);
    const impostor: EdgeRecord = { ...record, private_key: newMachineKey().privateKeyPem };
    const ended = await rawLink(record.machine, (nonce) => ({
      type: "hello",
      machine: record.machine,
      signature: signChallenge(impostor, nonce),
      serves: true,
    }));
    expect(ended).toEqual({ welcomed: false, code: 1008 });
    expect((await ownerBridgeCall()).status).toBe(200);
  });

  it("a replayed connect takes nothing over: a hello signed for another socket's challenge is closed 1008", async () => {
    let captured = "";
    // A first socket's challenge, signed by the real key, never sent on that socket...
    const first = await rawLink(record.machine, (nonce) => {
      captured = signChallenge(record, nonce);
      return { type: "hello", machine: record.machine, signature: captured, serves: false };
    });
    expect(first.welcomed).toBe(true);
    // ...is worthless on the next socket, whose challenge is fresh.
    const replayed = await rawLink(record.machine, () => ({
      type: "hello",
      machine: record.machine,
      signature: captured,
      serves: true,
    }));
    expect(replayed).toEqual({ welcomed: false, code: 1008 });
    expect((await ownerBridgeCall()).status).toBe(200);
  });

  it("the bridge killed: a call answers 502 bridge_unavailable at once, and a restarted bridge links again", async () => {
    const pgid = gateway!.process.pid!;
    process.kill(-pgid, "SIGKILL");
    await gateway!.stop().catch(() => null);
    gateway = null;
    const started = Date.now();
    const refused = await eventually(ownerBridgeCall, (a) => a.status === 502, 15_000);
    expect([refused.status, refused.body.error?.code]).toEqual([502, "bridge_unavailable"]);
    const unavailableAt = Date.now();
    const again = await ownerBridgeCall();
    expect([again.status, again.body.error?.code]).toEqual([502, "bridge_unavailable"]);
    expect(Date.now() - unavailableAt).toBeLessThan(2_000);
    expect(unavailableAt - started).toBeLessThan(15_000);
    // The app's traffic too: its record still says healthy (nobody reported the kill), and the link is gone.
    const proxied = await echoThroughEdge();
    expect([proxied.status, proxied.body.error?.code]).toEqual([502, "bridge_unavailable"]);
    gateway = await startGateway({ home, args: ["--edge"], env: cliEnv, detached: true });
    expect((await eventually(ownerBridgeCall, (a) => a.status === 200, 30_000)).status).toBe(200);
    // The restarted bridge starts the edge's enabled apps and reports them there: the app answers again.
    expect((await eventually(echoThroughEdge, (a) => a.status === 200, 30_000)).status).toBe(200);
  }, 120_000);

  it("a link that closes while a backend's answer is awaited fails the request with 502, never a hang", async () => {
    const pgid = gateway!.process.pid!;
    process.kill(-pgid, "SIGKILL");
    await gateway!.stop().catch(() => null);
    gateway = null;
    await eventually(ownerBridgeCall, (a) => a.status === 502, 15_000);
    const stalling = await standInBridge(null);
    const { port } = stalling.server.address() as { port: number };
    const link = testLink(stalling.url, "s", true, { endpointOf: () => ({ port }), appsDir: join(home, "apps") });
    const { answer, afterClose } = await closeLinkMidCall(link, stalling, echoThroughEdge);
    // What reached the machine is the request the edge signed, as a local proxy would send it.
    expect(stalling.seen[0]!.headers["x-personalclaw-proxy"]).toBeTruthy();
    expect(stalling.seen[0]!.url).toBe("/api/echo");
    expect([answer.status, answer.body.error?.code]).toEqual([502, "bridge_unavailable"]);
    expect(afterClose).toBeLessThan(5_000);
    gateway = await startGateway({ home, args: ["--edge"], env: cliEnv, detached: true });
    expect((await eventually(echoThroughEdge, (a) => a.status === 200, 30_000)).status).toBe(200);
  }, 120_000);

  it("a link that closes mid-call fails the call with 502 instead of leaving it waiting", async () => {
    await gateway!.stop();
    gateway = null;
    const stalling = await standInBridge(null);
    const { answer, afterClose } = await closeLinkMidCall(testLink(stalling.url, "s"), stalling, ownerBridgeCall);
    expect([answer.status, answer.body.error?.code]).toEqual([502, "bridge_unavailable"]);
    expect(afterClose).toBeLessThan(5_000);
  }, 60_000);

  it("an answer that does not match its contract row is bridge_unavailable, never a half-read object", async () => {
    const lying = await standInBridge(JSON.stringify({ secrets: "all of them" }));
    const link = testLink(lying.url, "s");
    try {
      await link.linked();
      const answer = await eventually(ownerBridgeCall, (a) => a.status !== 200 || lying.seen.length > 0, 10_000);
      expect([answer.status, answer.body.error?.code]).toEqual([502, "bridge_unavailable"]);
      expect(lying.seen.length).toBe(1);
    } finally {
      link.stop();
      lying.server.close();
    }
  }, 60_000);

  it("a serving link that sends no heartbeat is dropped by the edge: a call answers 502 at once instead of waiting into it", async () => {
    const { closed } = await provenLink(record, true);
    // Past the bound with no ping, the edge sends nothing into the link: the call fails at once and the link is closed.
    await new Promise((wake) => setTimeout(wake, LINK_SILENT_MS + 1_000));
    const askedAt = Date.now();
    const answer = await ownerBridgeCall();
    expect([answer.status, answer.body.error?.code]).toEqual([502, "bridge_unavailable"]);
    expect(Date.now() - askedAt).toBeLessThan(3_000);
    expect(await closed).toBe(LINK_SILENT_CLOSE);
  }, 60_000);

  it("a link whose path goes silent is dropped by the bridge within the heartbeat's bound and dialled again", async () => {
    const answering = await standInBridge(JSON.stringify({ secrets: [] }));
    const path = await freezablePath();
    const lines: string[] = [];
    const link = startEdgeLink({
      record,
      bridgeUrl: answering.url,
      secret: "s",
      dispatcher: edgeDispatcher(`127.0.0.1:${path.port}`, certs.caPem)!,
      log: (line) => lines.push(line),
    });
    try {
      await link.linked();
      expect((await ownerBridgeCall()).status).toBe(200);
      // Every byte of the open connection stops, both ways, and the connection stays open: no close ever comes.
      path.freeze();
      const frozenAt = Date.now();
      await eventually(
        async () => lines.some((line) => line.includes(`close ${LINK_SILENT_CLOSE}`)),
        (dropped) => dropped,
        LINK_SILENT_MS + LINK_PING_INTERVAL_MS + 5_000,
      );
      expect(Date.now() - frozenAt).toBeLessThan(LINK_SILENT_MS + LINK_PING_INTERVAL_MS + 2_000);
      // The bridge dialled again over a new connection, and the edge's calls reach it.
      expect((await eventually(ownerBridgeCall, (a) => a.status === 200, 20_000)).status).toBe(200);
      expect(path.connections()).toBeGreaterThanOrEqual(2);
    } finally {
      link.stop();
      path.close();
      answering.server.closeAllConnections();
      answering.server.close();
    }
  }, 90_000);

  it("a gateway whose link is down stops within its bound: its last reports do not wait for the link", async () => {
    const path = await freezablePath();
    gateway = await startGateway({
      home,
      args: ["--edge"],
      env: { ...cliEnv, PERSONALCLAW_EDGE_CONNECT_TO: `127.0.0.1:${path.port}` },
      detached: true,
    });
    // Linked, with the edge's two apps started and reported.
    await eventually(echoThroughEdge, (a) => a.status === 200, 30_000);
    // The path dies: the open connection is cut and every new one is refused, so the link stays down.
    path.close();
    await eventually(ownerBridgeCall, (a) => a.status === 502, 15_000);
    const stoppingAt = Date.now();
    expect(await gateway.stop()).toBe(0);
    gateway = null;
    // Each backend's stop is a report; waiting 10 s for the link apiece would meet the 9.5 s hard stop.
    expect(Date.now() - stoppingAt).toBeLessThan(8_000);
  }, 90_000);
});
