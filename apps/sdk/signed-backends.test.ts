// One suite for every verifier the SDK ships: node:http (withSignature), connect-style
// (requireProxySignature), Hono (honoVerifier) and Python http.server (SignedRequestHandler).
// Each runs as a real server on 127.0.0.1 with a route that counts its runs, so every
// refusal is checked for its answer AND for the route not having run.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { Hono } from "hono";
import { afterEach, describe, expect, it, vi } from "vitest";
import { signProxyRequest } from "../../kernel/crypto/proxy-signature";
import {
  createVerifier,
  honoVerifier,
  REFUSAL_BODY,
  requireProxySignature,
  withSignature,
  type Verifier,
} from "./node/index.js";
import { rawRequest } from "./raw-http";
import { loadVectors, type VerifyingVector } from "./test-vectors";

const vectors = loadVectors();

const SECRET = "9f2c6e1ab47d03c85e6f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f";
const NOW = 1700000000;
const H = "X-PersonalClaw-Proxy";
const b64 = (s: string) => Buffer.from(s, "base64");

type Backend = {
  port: number;
  /** How many times the /api route ran. */
  hits(): Promise<number>;
  /** Refusal reasons the verifier reported (the stderr warning lines for Python). */
  reasons(): string[];
  startupLog(): string;
  close(): Promise<void>;
};
type StartOptions = { secret: string; now: number; maxBodyBytes?: number };
type Implementation = { name: string; carriesRawNonAscii: boolean; start(o: StartOptions): Promise<Backend> };

// --- Node implementations, in-process -------------------------------------------------

function makeVerifier(o: StartOptions, reasons: string[]): { verifier: Verifier; log: string } {
  let log = "";
  const spy = vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    log += String(chunk);
    return true;
  });
  try {
    const verifier = createVerifier({
      secret: o.secret,
      now: () => o.now,
      maxBodyBytes: o.maxBodyBytes,
      onRefusal: (r) => void reasons.push(r),
    });
    return { verifier, log };
  } finally {
    spy.mockRestore();
  }
}

function echo(res: ServerResponse, obj: unknown) {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(obj));
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as { port: number }).port;
}

async function inProcess(server: Server, counter: { hits: number }, reasons: string[], log: string): Promise<Backend> {
  const port = await listen(server);
  return {
    port,
    hits: async () => counter.hits,
    reasons: () => reasons,
    startupLog: () => log,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const nodeHttp: Implementation = {
  name: "node:http withSignature",
  carriesRawNonAscii: false,
  async start(o) {
    const reasons: string[] = [];
    const counter = { hits: 0 };
    const { verifier, log } = makeVerifier(o, reasons);
    const server = createServer(
      withSignature((req, res, body) => {
        if (req.url!.split("?")[0] === "/health") return echo(res, { ok: true });
        counter.hits++;
        echo(res, { method: req.method, target: req.url, bodyBase64: body.toString("base64") });
      }, verifier),
    );
    return inProcess(server, counter, reasons, log);
  },
};

const connectStyle: Implementation = {
  name: "node:http requireProxySignature",
  carriesRawNonAscii: false,
  async start(o) {
    const reasons: string[] = [];
    const counter = { hits: 0 };
    const { verifier, log } = makeVerifier(o, reasons);
    const middleware = requireProxySignature(verifier);
    const server = createServer((req, res) =>
      middleware(req, res, () => {
        if (req.url!.split("?")[0] === "/health") return echo(res, { ok: true });
        counter.hits++;
        const body = (req as IncomingMessage & { rawBody: Buffer }).rawBody;
        echo(res, { method: req.method, target: req.url, bodyBase64: body.toString("base64") });
      }),
    );
    return inProcess(server, counter, reasons, log);
  },
};

// The part of @hono/node-server this suite needs: node:http in, Request to app.fetch with
// env.incoming set to the raw IncomingMessage, as that adapter does.
function serveHono(app: Hono<{ Variables: { rawBody: Uint8Array } }>): Server {
  return createServer(async (req, res) => {
    const hasBody = !["GET", "HEAD"].includes(req.method!);
    const request = new Request(`http://127.0.0.1${req.url}`, {
      method: req.method,
      headers: Object.entries(req.headersDistinct).flatMap(([k, vs]) =>
        (vs ?? []).map((v) => [k, v] as [string, string]),
      ),
      body: hasBody ? (Readable.toWeb(req) as ReadableStream) : undefined,
      duplex: "half",
    } as RequestInit);
    const response = await app.fetch(request, { incoming: req });
    response.headers.forEach((value, name) => res.setHeader(name, value));
    res.statusCode = response.status;
    res.end(Buffer.from(await response.arrayBuffer()));
  });
}

const hono: Implementation = {
  name: "Hono honoVerifier",
  carriesRawNonAscii: false,
  async start(o) {
    const reasons: string[] = [];
    const counter = { hits: 0 };
    const { verifier, log } = makeVerifier(o, reasons);
    const app = new Hono<{ Variables: { rawBody: Uint8Array } }>();
    app.use(honoVerifier(verifier));
    app.get("/health", (c) => c.json({ ok: true }));
    app.all("/api/*", async (c) => {
      counter.hits++;
      const target = (c.env as { incoming: IncomingMessage }).incoming.url;
      return c.json({ method: c.req.method, target, bodyBase64: Buffer.from(c.get("rawBody")).toString("base64") });
    });
    return inProcess(serveHono(app), counter, reasons, log);
  },
};

// --- Python implementation, a child process -------------------------------------------

const pythonHttpServer: Implementation = {
  name: "Python SignedRequestHandler",
  carriesRawNonAscii: true,
  async start(o) {
    const script = fileURLToPath(new URL("./python/suite_server.py", import.meta.url));
    const child: ChildProcessWithoutNullStreams = spawn(
      "python3",
      [script, String(o.now), String(o.maxBodyBytes ?? 16 * 1024 * 1024)],
      {
        env: {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          PERSONALCLAW_APP_SECRET: o.secret,
          PYTHONDONTWRITEBYTECODE: "1",
        },
      },
    );
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    const port = await new Promise<number>((resolve, reject) => {
      let out = "";
      child.stdout.on("data", (d) => {
        out += d;
        const m = /listening (\d+)/.exec(out);
        if (m) resolve(Number(m[1]));
      });
      child.on("exit", (code) => reject(new Error(`python suite server exited ${code}: ${stderr}`)));
    });
    return {
      port,
      async hits() {
        const r = await rawRequest(port, { method: "GET", target: "/health" });
        return (JSON.parse(r.body.toString()) as { hits: number }).hits;
      },
      reasons: () =>
        stderr
          .split("\n")
          .filter((l) => l.startsWith("{"))
          .map((l) => JSON.parse(l) as { event: string; reason: string })
          .filter((e) => e.event === "proxy_signature_refused")
          .map((e) => e.reason),
      startupLog: () => stderr,
      close: async () => {
        child.kill("SIGTERM");
        await new Promise((resolve) => child.once("exit", resolve));
      },
    };
  },
};

const implementations = [nodeHttp, connectStyle, hono, pythonHttpServer];

// --- The suite ----------------------------------------------------------------------------

describe.each(implementations)("$name", (impl) => {
  const running: Backend[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((b) => b.close()));
  });
  async function start(o: Partial<StartOptions> = {}): Promise<Backend> {
    const b = await impl.start({ secret: SECRET, now: NOW, ...o });
    running.push(b);
    return b;
  }
  async function signed(method: string, target: string, body = "", ts = NOW, secret = SECRET, nonce?: string) {
    return signProxyRequest({ secret, ts, method, target, body: new TextEncoder().encode(body), nonce });
  }
  async function expectRefusedUnrun(b: Backend, r: { status: number; body: Buffer }, reason: string) {
    expect(r.status).toBe(401);
    expect(r.body.toString()).toBe(REFUSAL_BODY);
    expect(await b.hits()).toBe(0);
    await vi.waitFor(() => expect(b.reasons()).toContain(reason));
  }

  it("answers every golden verifying vector as the vector expects, for the vector's reason", async () => {
    const bySecret = new Map<string, VerifyingVector[]>();
    for (const v of vectors.verifying) bySecret.set(v.secret, [...(bySecret.get(v.secret) ?? []), v]);
    for (const [secret, group] of bySecret) {
      const b = await start({ secret, now: group[0].now });
      let accepted = 0;
      for (const v of group) {
        const before = b.reasons().length;
        const r = await rawRequest(b.port, {
          method: v.method,
          target: v.target,
          headers: v.headers.map((h) => [H, h] as [string, string]),
          body: b64(v.body_base64),
        });
        if (v.expect === "accept") {
          accepted++;
          expect(r.status, v.name).toBe(200);
          expect(JSON.parse(r.body.toString()).bodyBase64, v.name).toBe(v.body_base64);
        } else {
          expect(r.status, v.name).toBe(401);
          expect(r.body.toString(), v.name).toBe(REFUSAL_BODY);
          await vi.waitFor(() => expect(b.reasons().slice(before), v.name).toEqual([v.reason]));
        }
        expect(await b.hits(), v.name).toBe(accepted);
      }
    }
  });

  it.each(vectors.verifying_sequences.map((s) => [s.name, s] as const))(
    "answers the golden sequence %s in order",
    async (_n, s) => {
      const b = await start({ secret: s.secret, now: s.now });
      let accepted = 0;
      for (const [i, req] of s.requests.entries()) {
        const label = `${s.name}[${i}]`;
        const before = b.reasons().length;
        const r = await rawRequest(b.port, {
          method: req.method,
          target: req.target,
          headers: req.headers.map((h) => [H, h] as [string, string]),
          body: b64(req.body_base64),
        });
        if (req.expect === "accept") {
          accepted++;
          expect(r.status, label).toBe(200);
        } else {
          expect(r.status, label).toBe(401);
          expect(r.body.toString(), label).toBe(REFUSAL_BODY);
          await vi.waitFor(() => expect(b.reasons().slice(before), label).toEqual([req.reason]));
        }
        expect(await b.hits(), label).toBe(accepted);
      }
    },
  );

  it("accepts every golden signing vector a HTTP/1.1 server can receive, with the body intact", async () => {
    const b = await start();
    let hits = 0;
    for (const v of vectors.signing) {
      // eslint-disable-next-line no-restricted-syntax -- picks test vectors by their published test secret
      if (v.name === "space-literal" || v.body_chunks_base64 || v.secret !== SECRET) continue;
      if (v.name === "non-ascii-raw" && !impl.carriesRawNonAscii) continue;
      const r = await rawRequest(b.port, {
        method: v.method,
        target: v.target,
        headers: [[H, v.header]],
        body: b64(v.body_base64),
      });
      expect(r.status, v.name).toBe(200);
      const seen = JSON.parse(r.body.toString());
      expect(seen.bodyBase64, v.name).toBe(v.body_base64);
      expect(await b.hits(), v.name).toBe(++hits);
    }
    expect(hits).toBeGreaterThan(10);
  });

  it("verifies a chunked body by its de-chunked bytes and hands the route those bytes", async () => {
    const b = await start();
    const v = vectors.signing.find((x) => x.body_chunks_base64)!;
    const r = await rawRequest(b.port, {
      method: v.method,
      target: v.target,
      headers: [[H, v.header]],
      chunks: v.body_chunks_base64!.map(b64),
    });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body.toString()).bodyBase64).toBe(v.body_base64);
    expect(await b.hits()).toBe(1);
  });

  it("refuses a request with no signature before the route runs", async () => {
    const b = await start();
    await expectRefusedUnrun(b, await rawRequest(b.port, { method: "GET", target: "/api/notes" }), "header_missing");
  });

  it("refuses a body changed after signing", async () => {
    const b = await start();
    const header = await signed("POST", "/api/notes", '{"text":"a"}');
    const r = await rawRequest(b.port, {
      method: "POST",
      target: "/api/notes",
      headers: [[H, header]],
      body: Buffer.from('{"text":"b"}'),
    });
    await expectRefusedUnrun(b, r, "signature_mismatch");
  });

  it("refuses a signature made with another app's secret", async () => {
    const b = await start();
    const header = await signed("GET", "/api/notes", "", NOW, "another app's secret");
    await expectRefusedUnrun(
      b,
      await rawRequest(b.port, { method: "GET", target: "/api/notes", headers: [[H, header]] }),
      "signature_mismatch",
    );
  });

  it.each([
    ["61 s old", -61],
    ["61 s ahead", 61],
  ])("refuses a signature %s", async (_label, skew) => {
    const b = await start();
    const header = await signed("GET", "/api/notes", "", NOW + skew);
    await expectRefusedUnrun(
      b,
      await rawRequest(b.port, { method: "GET", target: "/api/notes", headers: [[H, header]] }),
      "timestamp_outside_window",
    );
  });

  const nonce = "a".repeat(32);
  it.each([
    ["abc:def"],
    ["1700000000"],
    ["1700000000:" + "a".repeat(64)],
    [`+1700000000:${nonce}:${"a".repeat(64)}`],
    [`01700000000:${nonce}:${"a".repeat(64)}`],
    [`1700000000:${nonce}:${"A".repeat(64)}`],
    [`1700000000:${nonce}:${"a".repeat(63)}`],
    [`1700000000:${"a".repeat(31)}:${"a".repeat(64)}`],
    [`1700000000:${"A".repeat(32)}:${"a".repeat(64)}`],
    [`1700000000:${"z".repeat(32)}:${"a".repeat(64)}`],
  ])("refuses the malformed header %j", async (value) => {
    const b = await start();
    await expectRefusedUnrun(
      b,
      await rawRequest(b.port, { method: "GET", target: "/api/notes", headers: [[H, value]] }),
      "header_malformed",
    );
  });

  it("refuses a request carrying the header twice even when both copies are valid", async () => {
    const b = await start();
    const header = await signed("GET", "/api/notes");
    const r = await rawRequest(b.port, {
      method: "GET",
      target: "/api/notes",
      headers: [
        [H, header],
        [H.toLowerCase(), header],
      ],
    });
    await expectRefusedUnrun(b, r, "header_repeated");
  });

  it("serves the same request twice in the same second when each carries its own nonce", async () => {
    const b = await start();
    for (let i = 1; i <= 2; i++) {
      const header = await signed("GET", "/api/notes?page=1");
      const r = await rawRequest(b.port, { method: "GET", target: "/api/notes?page=1", headers: [[H, header]] });
      expect(r.status).toBe(200);
      expect(await b.hits()).toBe(i);
    }
    expect(b.reasons()).toEqual([]);
  });

  it("refuses a spent nonce even under another request's valid signature", async () => {
    const b = await start();
    const nonce = "0123456789abcdef".repeat(2);
    const first = await signed("GET", "/api/notes", "", NOW, SECRET, nonce);
    expect((await rawRequest(b.port, { method: "GET", target: "/api/notes", headers: [[H, first]] })).status).toBe(200);
    const other = await signed("POST", "/api/other", "{}", NOW, SECRET, nonce);
    const r = await rawRequest(b.port, {
      method: "POST",
      target: "/api/other",
      headers: [[H, other]],
      body: Buffer.from("{}"),
    });
    expect(r.status).toBe(401);
    expect(r.body.toString()).toBe(REFUSAL_BODY);
    expect(await b.hits()).toBe(1);
    await vi.waitFor(() => expect(b.reasons()).toEqual(["signature_replayed"]));
  });

  it("accepts a signature once and refuses its replay", async () => {
    const b = await start();
    const header = await signed("POST", "/api/notes", '{"text":"once"}');
    const send = () =>
      rawRequest(b.port, {
        method: "POST",
        target: "/api/notes",
        headers: [[H, header]],
        body: Buffer.from('{"text":"once"}'),
      });
    expect((await send()).status).toBe(200);
    const replay = await send();
    expect(replay.status).toBe(401);
    expect(replay.body.toString()).toBe(REFUSAL_BODY);
    expect(await b.hits()).toBe(1);
    await vi.waitFor(() => expect(b.reasons()).toEqual(["signature_replayed"]));
  });

  it("serves the health check unsigned, and only a GET on exactly that path", async () => {
    const b = await start();
    const health = await rawRequest(b.port, { method: "GET", target: "/health" });
    expect(health.status).toBe(200);
    expect(JSON.parse(health.body.toString()).ok).toBe(true);
    for (const [method, target] of [
      ["GET", "/health/../api/notes"],
      ["GET", "/%68ealth"],
      ["POST", "/health"],
      ["GET", "/healthz"],
    ]) {
      const r = await rawRequest(b.port, { method, target });
      expect(r.status, `${method} ${target}`).toBe(401);
      expect(r.body.toString()).toBe(REFUSAL_BODY);
    }
    expect(await b.hits()).toBe(0);
  });

  it("with no secret configured refuses every signed route, says so at startup, and still answers health", async () => {
    const b = await start({ secret: "" });
    expect(b.startupLog()).toMatch(/PERSONALCLAW_APP_SECRET is missing or empty/);
    for (const secret of ["", SECRET]) {
      const header = secret
        ? await signed("GET", "/api/notes", "", NOW, secret)
        : `${NOW}:${"0".repeat(32)}:${"0".repeat(64)}`;
      const r = await rawRequest(b.port, { method: "GET", target: "/api/notes", headers: [[H, header]] });
      expect(r.status).toBe(401);
      expect(r.body.toString()).toBe(REFUSAL_BODY);
    }
    expect((await rawRequest(b.port, { method: "GET", target: "/health" })).status).toBe(200);
    expect(await b.hits()).toBe(0);
    await vi.waitFor(() => expect(b.reasons()).toEqual(["secret_missing", "secret_missing"]));
  });

  it("answers 413 to a signed body over the size limit without running the route", async () => {
    const b = await start({ maxBodyBytes: 16 });
    const body = "x".repeat(17);
    const header = await signed("POST", "/api/notes", body);
    const r = await rawRequest(b.port, {
      method: "POST",
      target: "/api/notes",
      headers: [[H, header]],
      body: Buffer.from(body),
    });
    expect(r.status).toBe(413);
    expect(JSON.parse(r.body.toString()).error.code).toBe("body_too_large");
    expect(await b.hits()).toBe(0);
  });
});
