import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { PROXY_SIGNATURE_HEADER, SIGNATURE_WINDOW_S, sha256Hex, signatureMessage, signProxyRequest, wireTarget } from "./proxy-signature";

type SigningVector = {
  name: string;
  secret: string;
  ts: number;
  method: string;
  target: string;
  body_base64: string;
  body_chunks_base64?: string[];
  body_sha256: string;
  message: string;
  header: string;
};
type VerifyingVector = {
  name: string;
  now: number;
  secret: string;
  method: string;
  target: string;
  body_base64: string;
  headers: string[];
  expect: "accept" | "refuse";
  reason?: string;
};

const vectors = JSON.parse(readFileSync(new URL("../../apps/sdk/test-vectors.json", import.meta.url), "utf8")) as {
  format: { window_s: number };
  signing: SigningVector[];
  verifying: VerifyingVector[];
};
const bytes = (b64: string) => new Uint8Array(Buffer.from(b64, "base64"));

describe("proxy signature format", () => {
  it("names the header and the window the vectors were written for", () => {
    expect(PROXY_SIGNATURE_HEADER).toBe("X-PersonalClaw-Proxy");
    expect(SIGNATURE_WINDOW_S).toBe(vectors.format.window_s);
  });

  it.each(vectors.signing.map((v) => [v.name, v] as const))("the signer reproduces golden vector %s", async (_name, v) => {
    const body = bytes(v.body_base64);
    expect(await sha256Hex(body)).toBe(v.body_sha256);
    expect(signatureMessage(v.ts, v.method, v.target, v.body_sha256)).toBe(v.message);
    expect(await signProxyRequest({ secret: v.secret, ts: v.ts, method: v.method, target: v.target, body })).toBe(v.header);
  });

  it("a body sent in chunks signs the same as the whole body", async () => {
    const chunked = vectors.signing.filter((v) => v.body_chunks_base64);
    expect(chunked.length).toBeGreaterThan(0);
    for (const v of chunked) {
      const joined = Buffer.concat(v.body_chunks_base64!.map((c) => Buffer.from(c, "base64")));
      expect(await signProxyRequest({ secret: v.secret, ts: v.ts, method: v.method, target: v.target, body: new Uint8Array(joined) })).toBe(v.header);
    }
  });

  it("every header a verifier must accept is exactly what the signer mints", async () => {
    const accepted = vectors.verifying.filter((v) => v.expect === "accept");
    expect(accepted.length).toBeGreaterThan(0);
    for (const v of accepted) {
      const ts = Number(v.headers[0].split(":")[0]);
      const minted = await signProxyRequest({ secret: v.secret, ts, method: v.method, target: v.target, body: bytes(v.body_base64) });
      expect(minted, v.name).toBe(v.headers[0]);
    }
  });

  it("no header refused as a signature mismatch can be minted with the vector's secret", async () => {
    const mismatches = vectors.verifying.filter((x) => x.reason === "signature_mismatch");
    expect(mismatches.length).toBeGreaterThan(0);
    for (const v of mismatches) {
      const ts = Number(v.headers[0].split(":")[0]);
      const minted = await signProxyRequest({ secret: v.secret, ts, method: v.method, target: v.target, body: bytes(v.body_base64) });
      expect(minted, v.name).not.toBe(v.headers[0]);
    }
  });

  it("the HMAC key is the secret's UTF-8 bytes, not its hex decoding", async () => {
    const secret = "00".repeat(32);
    const body = new Uint8Array();
    const header = await signProxyRequest({ secret, ts: 1, method: "GET", target: "/api/x", body });
    const message = new TextEncoder().encode(signatureMessage(1, "GET", "/api/x", await sha256Hex(body)));
    const asUtf8 = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    const expected = Buffer.from(await crypto.subtle.sign("HMAC", asUtf8, message)).toString("hex");
    expect(header).toBe(`1:${expected}`);
  });

  it("refuses to sign with no secret rather than minting a forgeable signature", async () => {
    await expect(signProxyRequest({ secret: "", ts: 1, method: "GET", target: "/api/x", body: new Uint8Array() })).rejects.toThrow(/no secret/);
  });

  it("refuses a timestamp verifiers would reject as non-canonical", async () => {
    for (const ts of [1.5, -1, Number.NaN]) {
      await expect(signProxyRequest({ secret: "s", ts, method: "GET", target: "/api/x", body: new Uint8Array() })).rejects.toThrow(/integer/);
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
