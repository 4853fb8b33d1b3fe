// The verifier's own API, without HTTP. The HTTP behaviour shared with the Python SDK is in
// ../signed-backends.test.ts.
import { afterEach, describe, expect, it, vi } from "vitest";
import { signProxyRequest } from "../../../kernel/crypto/proxy-signature";
import { loadVectors } from "../test-vectors";
import { createVerifier } from "./index.js";

const vectors = loadVectors();
const quiet = { onRefusal: () => {} };

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

describe("createVerifier", () => {
  it.each(vectors.verifying.map((v) => [v.name, v] as const))("answers verifying vector %s as expected", (_n, v) => {
    vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    const verifier = createVerifier({ ...quiet, secret: v.secret, now: () => v.now });
    const outcome = verifier.verify({
      method: v.method,
      target: v.target,
      headerValues: v.headers,
      body: Buffer.from(v.body_base64, "base64"),
    });
    expect(outcome).toEqual(v.expect === "accept" ? { ok: true } : { ok: false, reason: v.reason });
  });

  it.each(vectors.verifying_sequences.map((s) => [s.name, s] as const))(
    "answers verifying sequence %s in order with one verifier",
    (_n, s) => {
      const verifier = createVerifier({ ...quiet, secret: s.secret, now: () => s.now });
      const outcomes = s.requests.map((r) =>
        verifier.verify({
          method: r.method,
          target: r.target,
          headerValues: r.headers,
          body: Buffer.from(r.body_base64, "base64"),
        }),
      );
      expect(outcomes).toEqual(
        s.requests.map((r) => (r.expect === "accept" ? { ok: true } : { ok: false, reason: r.reason })),
      );
    },
  );

  it.each(vectors.signing.map((v) => [v.name, v] as const))(
    "accepts signing vector %s, including targets HTTP could not carry",
    (_n, v) => {
      const verifier = createVerifier({ ...quiet, secret: v.secret, now: () => v.ts });
      const outcome = verifier.verify({
        method: v.method,
        target: v.target,
        headerValues: [v.header],
        body: Buffer.from(v.body_base64, "base64"),
      });
      expect(outcome).toEqual({ ok: true });
    },
  );

  it("takes the secret from PERSONALCLAW_APP_SECRET when none is passed", async () => {
    vi.stubEnv("PERSONALCLAW_APP_SECRET", "from the environment");
    const verifier = createVerifier({ ...quiet, now: () => 100 });
    const header = await signProxyRequest({
      secret: "from the environment",
      ts: 100,
      method: "GET",
      target: "/api/x",
      body: new Uint8Array(),
    });
    expect(verifier.verify({ method: "GET", target: "/api/x", headerValues: [header], body: Buffer.alloc(0) })).toEqual(
      { ok: true },
    );
  });

  it("with the environment variable unset, says so on stderr once and refuses everything", async () => {
    vi.stubEnv("PERSONALCLAW_APP_SECRET", undefined as unknown as string);
    const writes: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation(
      (chunk: string | Uint8Array) => (writes.push(String(chunk)), true),
    );
    const verifier = createVerifier({ ...quiet, now: () => 100 });
    expect(writes).toHaveLength(1);
    expect(writes[0]).toMatch(/PERSONALCLAW_APP_SECRET is missing or empty/);
    expect(verifier.hasSecret).toBe(false);
    const header = await signProxyRequest({
      secret: "x",
      ts: 100,
      method: "GET",
      target: "/api/x",
      body: new Uint8Array(),
    });
    expect(verifier.verify({ method: "GET", target: "/api/x", headerValues: [header], body: Buffer.alloc(0) })).toEqual(
      { ok: false, reason: "secret_missing" },
    );
  });

  it("forgets an accepted signature only once the window would refuse it anyway", async () => {
    let clock = 1000;
    const verifier = createVerifier({ ...quiet, secret: "s", now: () => clock });
    const header = await signProxyRequest({
      secret: "s",
      ts: 1000,
      method: "GET",
      target: "/api/x",
      body: new Uint8Array(),
    });
    const attempt = () =>
      verifier.verify({ method: "GET", target: "/api/x", headerValues: [header], body: Buffer.alloc(0) });
    expect(attempt()).toEqual({ ok: true });
    clock = 1060;
    expect(attempt()).toEqual({ ok: false, reason: "signature_replayed" });
    clock = 1061;
    expect(attempt()).toEqual({ ok: false, reason: "timestamp_outside_window" });
  });

  it("accepts the same request twice in one second when the gateway signed each with its own nonce", async () => {
    const verifier = createVerifier({ ...quiet, secret: "s", now: () => 1000 });
    for (let i = 0; i < 2; i++) {
      const header = await signProxyRequest({
        secret: "s",
        ts: 1000,
        method: "GET",
        target: "/api/x",
        body: new Uint8Array(),
      });
      expect(
        verifier.verify({ method: "GET", target: "/api/x", headerValues: [header], body: Buffer.alloc(0) }),
      ).toEqual({ ok: true });
    }
  });

  it("refuses a spent nonce even on another request signed validly with it", async () => {
    const verifier = createVerifier({ ...quiet, secret: "s", now: () => 1000 });
    const nonce = "0123456789abcdef".repeat(2);
    const first = await signProxyRequest({
      secret: "s",
      ts: 1000,
      method: "GET",
      target: "/api/x",
      body: new Uint8Array(),
      nonce,
    });
    const other = await signProxyRequest({
      secret: "s",
      ts: 1001,
      method: "POST",
      target: "/api/y",
      body: Buffer.from("{}"),
      nonce,
    });
    expect(verifier.verify({ method: "GET", target: "/api/x", headerValues: [first], body: Buffer.alloc(0) })).toEqual({
      ok: true,
    });
    expect(
      verifier.verify({ method: "POST", target: "/api/y", headerValues: [other], body: Buffer.from("{}") }),
    ).toEqual({
      ok: false,
      reason: "signature_replayed",
    });
  });

  it("refuses odd header values as malformed instead of throwing", () => {
    const verifier = createVerifier({ ...quiet, secret: "s", now: () => 1 });
    const nonce = "a".repeat(32);
    for (const value of [
      `1:${nonce}:${"a".repeat(64)}\n`,
      `1:${nonce}:${"é".repeat(64)}`,
      `1:${nonce}:${"a".repeat(10_000)}`,
      "\u0000",
      `1:${"a".repeat(64)}`,
      `1:${"a".repeat(31)}:${"a".repeat(64)}`,
      `1:${"A".repeat(32)}:${"a".repeat(64)}`,
      `1:${"é".repeat(32)}:${"a".repeat(64)}`,
      `1:${"a".repeat(30)}\n:${"a".repeat(64)}`,
    ]) {
      expect(
        verifier.verify({ method: "GET", target: "/api/x", headerValues: [value], body: Buffer.alloc(0) }),
      ).toEqual({
        ok: false,
        reason: "header_malformed",
      });
    }
  });

  it("writes a refusal as one JSON warning line on stderr that names the path but not the query", () => {
    const writes: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation(
      (chunk: string | Uint8Array) => (writes.push(String(chunk)), true),
    );
    const verifier = createVerifier({ secret: "s" });
    verifier.refuse("header_missing", "GET", "/api/notes?token=private");
    expect(writes.map((w) => JSON.parse(w))).toEqual([
      {
        level: "warning",
        event: "proxy_signature_refused",
        reason: "header_missing",
        method: "GET",
        path: "/api/notes",
      },
    ]);
  });

  it("exempts only GET and HEAD on exactly the configured health path", () => {
    const verifier = createVerifier({ ...quiet, secret: "s", healthPath: "/status" });
    expect(verifier.isExempt("GET", "/status?probe=1")).toBe(true);
    expect(verifier.isExempt("HEAD", "/status")).toBe(true);
    expect(verifier.isExempt("GET", "/health")).toBe(false);
    expect(verifier.isExempt("POST", "/status")).toBe(false);
    expect(verifier.isExempt("GET", "/status/")).toBe(false);
    expect(createVerifier({ ...quiet, secret: "s", healthPath: null }).isExempt("GET", "/health")).toBe(false);
  });
});
