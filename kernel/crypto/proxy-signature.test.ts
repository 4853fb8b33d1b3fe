import { describe, expect, it } from "vitest";
import { loadVectors } from "../../apps/sdk/test-vectors";
import {
  PROXY_SIGNATURE_HEADER,
  SIGNATURE_WINDOW_S,
  signatureMessage,
  signProxyRequest,
  wireTarget,
} from "./proxy-signature";
import { sha256Hex } from "./hex";

const vectors = loadVectors();
const bytes = (b64: string) => new Uint8Array(Buffer.from(b64, "base64"));

describe("proxy signature format", () => {
  it("names the header and the window the vectors were written for", () => {
    expect(PROXY_SIGNATURE_HEADER).toBe("X-PersonalClaw-Proxy");
    expect(SIGNATURE_WINDOW_S).toBe(vectors.format.window_s);
  });

  it.each(vectors.signing.map((v) => [v.name, v] as const))(
    "the signer reproduces golden vector %s",
    async (_name, v) => {
      const body = bytes(v.body_base64);
      expect(await sha256Hex(body)).toBe(v.body_sha256);
      expect(signatureMessage(v.ts, v.nonce, v.method, v.target, v.body_sha256)).toBe(v.message);
      expect(
        await signProxyRequest({
          secret: v.secret,
          ts: v.ts,
          method: v.method,
          target: v.target,
          body,
          nonce: v.nonce,
        }),
      ).toBe(v.header);
    },
  );

  it("a body sent in chunks signs the same as the whole body", async () => {
    const chunked = vectors.signing.filter((v) => v.body_chunks_base64);
    expect(chunked.length).toBeGreaterThan(0);
    for (const v of chunked) {
      const joined = Buffer.concat(v.body_chunks_base64!.map((c) => Buffer.from(c, "base64")));
      expect(
        await signProxyRequest({
          secret: v.secret,
          ts: v.ts,
          method: v.method,
          target: v.target,
          body: new Uint8Array(joined),
          nonce: v.nonce,
        }),
      ).toBe(v.header);
    }
  });

  // Every request in the vectors, verifying and sequence alike, with the secret it is checked under.
  const allRequests = [
    ...vectors.verifying.map((v) => ({ ...v })),
    ...vectors.verifying_sequences.flatMap((s) =>
      s.requests.map((r, i) => ({ ...r, name: `${s.name}[${i}]`, secret: s.secret })),
    ),
  ];
  const mintFor = (v: (typeof allRequests)[number]) => {
    const [ts, nonce] = v.headers[0].split(":");
    return signProxyRequest({
      secret: v.secret,
      ts: Number(ts),
      nonce,
      method: v.method,
      target: v.target,
      body: bytes(v.body_base64),
    });
  };

  it("every header a verifier must accept is exactly what the signer mints", async () => {
    const accepted = allRequests.filter((v) => v.expect === "accept");
    expect(accepted.length).toBeGreaterThan(4);
    for (const v of accepted) expect(await mintFor(v), v.name).toBe(v.headers[0]);
  });

  it("every header refused only as a replay is one the signer mints: the nonce alone refuses it", async () => {
    const replays = allRequests.filter((v) => v.reason === "signature_replayed");
    expect(replays.length).toBeGreaterThan(1);
    for (const v of replays) expect(await mintFor(v), v.name).toBe(v.headers[0]);
  });

  it("no header refused as a signature mismatch can be minted with the vector's secret", async () => {
    const mismatches = allRequests.filter((x) => x.reason === "signature_mismatch");
    expect(mismatches.length).toBeGreaterThan(0);
    for (const v of mismatches) expect(await mintFor(v), v.name).not.toBe(v.headers[0]);
  });

  it("the nonce is covered by the HMAC: the same request under another nonce signs differently", async () => {
    const base = { secret: "s", ts: 1, method: "GET", target: "/api/x", body: new Uint8Array() };
    const a = await signProxyRequest({ ...base, nonce: "0".repeat(32) });
    const b = await signProxyRequest({ ...base, nonce: "0".repeat(31) + "1" });
    expect(a.split(":")[2]).not.toBe(b.split(":")[2]);
  });

  it("without a nonce, signs each request with a fresh 128-bit lower-case hex nonce", async () => {
    const base = { secret: "s", ts: 1, method: "GET", target: "/api/x", body: new Uint8Array() };
    const headers = await Promise.all(Array.from({ length: 8 }, () => signProxyRequest(base)));
    for (const h of headers) expect(h).toMatch(/^1:[0-9a-f]{32}:[0-9a-f]{64}$/);
    expect(new Set(headers.map((h) => h.split(":")[1])).size).toBe(headers.length);
    // The header it returns is the one the message format predicts for its nonce.
    const [, nonce] = headers[0].split(":");
    expect(await signProxyRequest({ ...base, nonce })).toBe(headers[0]);
  });

  it.each([["a".repeat(31)], ["a".repeat(33)], ["A".repeat(32)], ["g".repeat(32)], [""]])(
    "refuses to sign with the nonce %j, which verifiers refuse",
    async (nonce) => {
      await expect(
        signProxyRequest({ secret: "s", ts: 1, method: "GET", target: "/api/x", body: new Uint8Array(), nonce }),
      ).rejects.toThrow(/nonce/);
    },
  );

  it("the HMAC key is the secret's UTF-8 bytes, not its hex decoding", async () => {
    const secret = "00".repeat(32);
    const body = new Uint8Array();
    const nonce = "5".repeat(32);
    const header = await signProxyRequest({ secret, ts: 1, method: "GET", target: "/api/x", body, nonce });
    const message = new TextEncoder().encode(signatureMessage(1, nonce, "GET", "/api/x", await sha256Hex(body)));
    const asUtf8 = await crypto.subtle.importKey(
      "raw",
      new TextEncoder().encode(secret),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    const expected = Buffer.from(await crypto.subtle.sign("HMAC", asUtf8, message)).toString("hex");
    expect(header).toBe(`1:${nonce}:${expected}`);
  });

  it("refuses to sign with no secret rather than minting a forgeable signature", async () => {
    await expect(
      signProxyRequest({ secret: "", ts: 1, method: "GET", target: "/api/x", body: new Uint8Array() }),
    ).rejects.toThrow(/no secret/);
  });

  it("refuses a timestamp verifiers would reject as non-canonical", async () => {
    for (const ts of [1.5, -1, Number.NaN]) {
      await expect(
        signProxyRequest({ secret: "s", ts, method: "GET", target: "/api/x", body: new Uint8Array() }),
      ).rejects.toThrow(/integer/);
    }
  });

  it.each([
    ["http://127.0.0.1:9/api/x?", "/api/x?"],
    ["http://127.0.0.1:9/api/x", "/api/x"],
    ["http://127.0.0.1:9/api/a b/\u2713?q=a b", "/api/a%20b/%E2%9C%93?q=a%20b"],
    ["http://127.0.0.1:9/api/x/../y?%7e", "/api/y?%7e"],
    ["http://127.0.0.1:9/api/c%2b?x=%41#frag", "/api/c%2b?x=%41"],
    ["http://u:p@127.0.0.1:9/api/x?a=/b", "/api/x?a=/b"],
  ])("the signed target of %s is %s, as workerd's fetch sends it", (url, target) => {
    expect(wireTarget(new URL(url))).toBe(target);
  });
});
