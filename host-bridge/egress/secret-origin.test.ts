// The broker puts a secret on the wire for its origin only: a real broker on a UNIX socket, a
// local TLS origin on a loopback address with a certificate from a CA made for this run (given
// to the broker as the owner's extra authority), and a second granted TLS host that is not an
// origin. Integration tier: the certificates come from openssl.
import http from "node:http";
import https from "node:https";
import { gzipSync } from "node:zlib";
import { rmSync } from "node:fs";
import type net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseHostPattern, type HostPattern } from "../../kernel/rules/network-grant";
import { parseSecretOrigin, type SecretOrigin } from "../../kernel/contracts/secret-delivery";
import { makeTestCertificates, type TestCertificates } from "../../test/helpers/test-ca";
import { startBroker, type EgressBroker, type EgressDecision } from "./broker";
import { loadOriginTrust } from "./origin-tls";
import { newPlaceholder, type PlacedSecret } from "./secret-placeholders";

let certs: TestCertificates;
let origin: https.Server;
let second: https.Server;
let originPort: number;
let secondPort: number;
let broker: EgressBroker;
let untrusting: EgressBroker;
const decisions: EgressDecision[] = [];
/** What the TLS origin and the second host received: each request's url and headers. */
const originSaw: Array<{ url: string; headers: http.IncomingHttpHeaders }> = [];
let secondConnections = 0;
/** TLS handshakes the origin completed: a kept connection adds none. */
let originHandshakes = 0;
let value = "sk-live-Origin-0123456789abcdef";
let assigned = true;
let key: PlacedSecret;
let queryKey: PlacedSecret;

function placed(name: string, use: PlacedSecret["use"], read: () => string | null): PlacedSecret {
  const origins = use.origins.map((o) => parseSecretOrigin(o) as SecretOrigin);
  return { name, use, origins: () => origins, read, placeholder: newPlaceholder() };
}

/** An absolute-form request through `via`'s socket, as a confined client's proxy settings send it. */
function throughBroker(
  url: string,
  headers: Record<string, string> = {},
  via: EgressBroker = broker,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath: via.socketPath, path: url, headers, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

function answerAsOrigin(req: http.IncomingMessage, res: http.ServerResponse): void {
  originSaw.push({ url: req.url ?? "", headers: req.headers });
  const auth = req.headers.authorization ?? "";
  if (req.url === "/gzip") {
    res.writeHead(200, { "content-encoding": "gzip" });
    return void res.end(gzipSync(`you sent ${auth}`));
  }
  if (req.url === "/split") {
    // The value echoed a few bytes at a time: a masker that looks at one chunk alone misses it.
    res.writeHead(200, { "content-type": "text/plain" });
    const text = `you sent ${auth} (${auth})`;
    let at = 0;
    const next = () => {
      if (at >= text.length) return void res.end();
      res.write(text.slice(at, at + 3));
      at += 3;
      setImmediate(next);
    };
    return next();
  }
  res.writeHead(200, { "content-type": "application/json", "x-echo-authorization": auth });
  res.end(JSON.stringify({ url: req.url, authorization: auth }));
}

beforeAll(async () => {
  certs = makeTestCertificates({ addresses: ["127.0.0.2", "127.0.0.3"] });
  origin = https.createServer({ key: certs.key, cert: certs.cert }, answerAsOrigin);
  await new Promise<void>((r) => origin.listen(0, "127.0.0.2", r));
  originPort = (origin.address() as net.AddressInfo).port;
  origin.on("secureConnection", () => (originHandshakes += 1));
  second = https.createServer({ key: certs.key, cert: certs.cert }, (_req, res) => res.end("second host"));
  second.on("connection", () => (secondConnections += 1));
  await new Promise<void>((r) => second.listen(0, "127.0.0.3", r));
  secondPort = (second.address() as net.AddressInfo).port;
  const originText = `https://127.0.0.2:${originPort}`;
  key = placed("API_KEY", { origins: [originText], header: "Authorization", format: "Bearer {value}" }, () =>
    assigned ? value : null,
  );
  queryKey = placed("QUERY_KEY", { origins: [originText], query: "api_key" }, () => "query-value-7654321");
  const grant = [`127.0.0.2:${originPort}`, `127.0.0.3:${secondPort}`].map((t) => parseHostPattern(t) as HostPattern);
  const common = {
    app: "weather",
    grant,
    onDecision: (d: EgressDecision) => decisions.push(d),
    secrets: [key, queryKey],
  };
  broker = await startBroker({
    ...common,
    socketPath: path.join(certs.dir, "broker.sock"),
    trust: loadOriginTrust({ extraCaFile: certs.caPath }),
  });
  untrusting = await startBroker({
    ...common,
    socketPath: path.join(certs.dir, "untrusting.sock"),
    trust: loadOriginTrust({ extraCaFile: "" }),
  });
});

afterAll(async () => {
  await broker?.close();
  await untrusting?.close();
  origin?.close();
  second?.close();
  if (certs) rmSync(certs.dir, { recursive: true, force: true });
});

const originUrl = (p: string) => `http://127.0.0.2:${originPort}${p}`;

describe("a secret's origin", () => {
  it("receives the current value over TLS in the declared header; the app's answer holds only masks", async () => {
    const answer = await throughBroker(originUrl("/echo"), { authorization: `Bearer ${key.placeholder}` });
    expect(answer.status).toBe(200);
    expect(originSaw.at(-1)!.headers.authorization).toBe(`Bearer ${value}`);
    expect(originSaw.at(-1)!.headers.host).toBe(`127.0.0.2:${originPort}`);
    expect(JSON.stringify(answer)).not.toContain(value);
    expect(answer.headers["x-echo-authorization"]).toBe(`Bearer ${"*".repeat(value.length)}`);
    expect(decisions.at(-1)).toMatchObject({ outcome: "allowed", host: "127.0.0.2", port: originPort });
  });

  it("a kept connection carries the next requests: one handshake, each request still an allowed decision", async () => {
    const before = originHandshakes;
    const allowed = () => decisions.filter((d) => d.outcome === "allowed" && d.port === originPort).length;
    const allowedBefore = allowed();
    for (let i = 0; i < 3; i += 1) {
      const answer = await throughBroker(originUrl("/echo"), { authorization: `Bearer ${key.placeholder}` });
      expect(answer.status).toBe(200);
      expect(originSaw.at(-1)!.headers.authorization).toBe(`Bearer ${value}`);
    }
    expect(originHandshakes - before).toBeLessThanOrEqual(1);
    expect(allowed() - allowedBefore).toBe(3);
  });

  it("gets a replaced value at the next request, with no restart", async () => {
    value = "sk-live-Rotated-fedcba9876543210";
    await throughBroker(originUrl("/echo"), { authorization: `Bearer ${key.placeholder}` });
    expect(originSaw.at(-1)!.headers.authorization).toBe(`Bearer ${value}`);
  });

  it("receives a query parameter's value, and the value is masked where the answer echoes it", async () => {
    const answer = await throughBroker(originUrl(`/echo?api_key=${queryKey.placeholder}&q=1`));
    expect(originSaw.at(-1)!.url).toBe("/echo?api_key=query-value-7654321&q=1");
    expect(answer.body).not.toContain("query-value-7654321");
  });

  it("a value the origin echoes a few bytes at a time never reaches the app", async () => {
    const answer = await throughBroker(originUrl("/split"), { authorization: `Bearer ${key.placeholder}` });
    expect(answer.status).toBe(200);
    expect(answer.body).toBe(`you sent Bearer ${"*".repeat(value.length)} (Bearer ${"*".repeat(value.length)})`);
  });

  it("a compressed answer to a request that carried the value is refused, not passed on unmasked", async () => {
    const answer = await throughBroker(originUrl("/gzip"), { authorization: `Bearer ${key.placeholder}` });
    expect(originSaw.at(-1)!.headers["accept-encoding"]).toBe("identity");
    expect(answer.status).toBe(502);
    expect(answer.headers["x-personalclaw-egress"]).toBe("secret_answer_unmaskable");
  });

  it("an origin whose certificate no trusted authority signed gets no request: egress_tls_failed", async () => {
    const before = originSaw.length;
    const answer = await throughBroker(originUrl("/echo"), { authorization: `Bearer ${key.placeholder}` }, untrusting);
    expect(answer.status).toBe(502);
    expect(answer.headers["x-personalclaw-egress"]).toBe("egress_tls_failed");
    expect(originSaw.length).toBe(before);
    expect(decisions.at(-1)).toMatchObject({ outcome: "refused", code: "egress_tls_failed" });
  });

  it("a secret taken back is refused (secret_unavailable) and its origin never asked", async () => {
    assigned = false;
    const before = originSaw.length;
    try {
      const answer = await throughBroker(originUrl("/echo"), { authorization: `Bearer ${key.placeholder}` });
      expect(answer.status).toBe(503);
      expect(answer.headers["x-personalclaw-egress"]).toBe("secret_unavailable");
      expect(originSaw.length).toBe(before);
    } finally {
      assigned = true;
    }
  });
});

describe("a placeholder sent where its secret does not go", () => {
  it("to a second granted host is refused (secret_misdirected), a refused decision, and that host is never dialled", async () => {
    const before = secondConnections;
    for (const [url, headers] of [
      [`http://127.0.0.3:${secondPort}/`, { authorization: `Bearer ${key.placeholder}` }],
      [`http://127.0.0.3:${secondPort}/?api_key=${queryKey.placeholder}`, {}],
      [`http://127.0.0.3:${secondPort}/`, { "x-smuggle": key.placeholder }],
    ] as const) {
      const answer = await throughBroker(url, headers);
      expect(answer.status, url).toBe(403);
      expect(answer.headers["x-personalclaw-egress"]).toBe("secret_misdirected");
      expect(answer.body).not.toContain(key.placeholder);
      expect(decisions.at(-1)).toMatchObject({
        outcome: "refused",
        code: "secret_misdirected",
        host: "127.0.0.3",
        port: secondPort,
      });
    }
    expect(secondConnections).toBe(before);
  });

  it("to its own origin in an undeclared header or the path is refused, and the origin asked nothing", async () => {
    const before = originSaw.length;
    for (const [p, headers] of [
      ["/echo", { "x-debug": key.placeholder }],
      [`/echo/${key.placeholder}`, {}],
      [`/echo?note=${key.placeholder}`, {}],
    ] as const) {
      const answer = await throughBroker(originUrl(p), headers);
      expect(answer.headers["x-personalclaw-egress"], p).toBe("secret_misdirected");
    }
    expect(originSaw.length).toBe(before);
  });

  it("the value itself never appears in a decision", () => {
    expect(JSON.stringify(decisions)).not.toContain("sk-live");
    expect(JSON.stringify(decisions)).not.toContain("query-value");
  });
});
