// Lower-case hex, the one spelling of bytes every id, key, digest and mac here uses.

const HEX_DIGITS = new TextEncoder().encode("0123456789abcdef");
const decoder = new TextDecoder();
// The digits are written as bytes into one reused buffer and decoded once, instead of building
// a string of pairs (a row's mac is spelled on every security-log append). Safe to reuse: it is
// filled and read in one synchronous call.
let spelled = new Uint8Array(64);

/** Writes the bytes' lower-case hex digits, as ASCII, into `out` (twice their length). */
export function hexDigitsInto(bytes: Uint8Array, out: Uint8Array): void {
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    out[2 * i] = HEX_DIGITS[byte >>> 4]!;
    out[2 * i + 1] = HEX_DIGITS[byte & 15]!;
  }
}

/** The bytes as lower-case hex, two digits each. */
export function hexOf(bytes: Uint8Array): string {
  if (spelled.length < 2 * bytes.length) spelled = new Uint8Array(2 * bytes.length);
  hexDigitsInto(bytes, spelled);
  return decoder.decode(spelled.subarray(0, 2 * bytes.length));
}

/** Lower-case hex SHA-256 of the bytes (WebCrypto's native digest). */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  // WebCrypto takes only ArrayBuffer-backed views; copy the rare view over a SharedArrayBuffer.
  const view = bytes.buffer instanceof ArrayBuffer ? (bytes as Uint8Array<ArrayBuffer>) : new Uint8Array(bytes);
  return hexOf(new Uint8Array(await crypto.subtle.digest("SHA-256", view)));
}

/** The bytes lower-case (or upper-case) hex spells; the caller has checked it is hex of even length. */
export function bytesOfHex(hex: string): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}
