// The synchronous HMAC-SHA256 the chain signs with must be byte for byte WebCrypto's.
import { describe, expect, it } from "vitest";
import { hmacSha256, macKeyOf } from "./hmac-sha256";

describe("hmacSha256", () => {
  it("equals WebCrypto's HMAC-SHA256 for every message length around the block edges and random keys", async () => {
    for (const keyLength of [0, 1, 32, 63, 64]) {
      const keyBytes = crypto.getRandomValues(new Uint8Array(keyLength));
      const key = macKeyOf(keyBytes);
      const web = keyLength === 0 ? null : await crypto.subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
      for (let length = 0; length < 300; length++) {
        if (web === null) break;
        const message = crypto.getRandomValues(new Uint8Array(length));
        const expected = new Uint8Array(await crypto.subtle.sign("HMAC", web, message));
        expect(Buffer.from(hmacSha256(key, message)).toString("hex"), `key ${keyLength} message ${length}`).toBe(Buffer.from(expected).toString("hex"));
      }
    }
  });

  it("matches RFC 4231 test case 2", () => {
    const mac = hmacSha256(macKeyOf(new TextEncoder().encode("Jefe")), new TextEncoder().encode("what do ya want for nothing?"));
    expect(Buffer.from(mac).toString("hex")).toBe("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  });
});
