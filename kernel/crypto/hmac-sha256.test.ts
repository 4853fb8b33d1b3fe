// The log's synchronous HMAC-SHA256 must be WebCrypto's, bit for bit: a stored mac written by
// either must verify with the other.
import { describe, expect, it } from "vitest";
import { hmacSha256, hmacSha256Into, prepareHmacKey } from "./hmac-sha256";

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");
const fromHex = (text: string) => new Uint8Array(Buffer.from(text, "hex"));

async function webCryptoHmac(key: Uint8Array, message: Uint8Array): Promise<string> {
  const imported = await crypto.subtle.importKey(
    "raw",
    key as Uint8Array<ArrayBuffer>,
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return hex(new Uint8Array(await crypto.subtle.sign("HMAC", imported, message as Uint8Array<ArrayBuffer>)));
}

describe("hmacSha256", () => {
  it("answers the RFC 4231 test vectors whose keys fit one block", () => {
    const cases = [
      {
        key: "0b".repeat(20),
        data: hex(new TextEncoder().encode("Hi There")),
        mac: "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
      },
      {
        key: hex(new TextEncoder().encode("Jefe")),
        data: hex(new TextEncoder().encode("what do ya want for nothing?")),
        mac: "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
      },
      {
        key: "aa".repeat(20),
        data: "dd".repeat(50),
        mac: "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe",
      },
      {
        key: "0102030405060708090a0b0c0d0e0f10111213141516171819",
        data: "cd".repeat(50),
        mac: "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b",
      },
    ];
    for (const { key, data, mac } of cases)
      expect(hex(hmacSha256(prepareHmacKey(fromHex(key)), fromHex(data)))).toBe(mac);
  });

  it("equals WebCrypto's HMAC-SHA256 for every message length across three blocks, with random keys and bytes", async () => {
    for (let length = 0; length <= 3 * 64 + 1; length++) {
      const key = crypto.getRandomValues(new Uint8Array(length % 2 === 0 ? 32 : 64));
      const message = crypto.getRandomValues(new Uint8Array(length));
      expect(hex(hmacSha256(prepareHmacKey(key), message)), `length ${length}`).toBe(await webCryptoHmac(key, message));
    }
  });

  it("equals WebCrypto's for long messages and for a prefix of a larger buffer, reusing one prepared key", async () => {
    const key = crypto.getRandomValues(new Uint8Array(32));
    const prepared = prepareHmacKey(key);
    const buffer = crypto.getRandomValues(new Uint8Array(20_000));
    const out = new Uint8Array(32);
    for (const length of [300, 4095, 4096, 19_999]) {
      hmacSha256Into(prepared, buffer, length, out);
      expect(hex(out), `length ${length}`).toBe(await webCryptoHmac(key, buffer.subarray(0, length)));
    }
    // A view that does not start at its buffer's first byte.
    const view = buffer.subarray(7, 7 + 500);
    expect(hex(hmacSha256(prepared, view))).toBe(await webCryptoHmac(key, view));
  });

  it("hashes a key longer than one block first, as the RFC 4231 vectors with 131-byte keys show", () => {
    const key = "aa".repeat(131);
    const large = hex(new TextEncoder().encode("Test Using Larger Than Block-Size Key - Hash Key First"));
    expect(hex(hmacSha256(prepareHmacKey(fromHex(key)), fromHex(large)))).toBe(
      "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
    );
    const data = hex(
      new TextEncoder().encode(
        "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.",
      ),
    );
    expect(hex(hmacSha256(prepareHmacKey(fromHex(key)), fromHex(data)))).toBe(
      "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2",
    );
  });

  it("equals WebCrypto's for keys of every length up to three blocks (WebCrypto has no empty key)", async () => {
    const message = crypto.getRandomValues(new Uint8Array(150));
    for (let length = 1; length <= 3 * 64; length++) {
      const key = crypto.getRandomValues(new Uint8Array(length));
      expect(hex(hmacSha256(prepareHmacKey(key), message)), `key length ${length}`).toBe(
        await webCryptoHmac(key, message),
      );
    }
  });
});
