// Lower-case hex, the one spelling of bytes every id, key, digest and mac here uses.

const HEX_PAIRS = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

/** The bytes as lower-case hex, two digits each. */
export function hexOf(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i++) out += HEX_PAIRS[bytes[i]!];
  return out;
}

/** Lower-case hex SHA-256 of the bytes (WebCrypto's native digest). */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  // WebCrypto takes only ArrayBuffer-backed views; copy the rare view over a SharedArrayBuffer.
  const view = bytes.buffer instanceof ArrayBuffer ? (bytes as Uint8Array<ArrayBuffer>) : new Uint8Array(bytes);
  return hexOf(new Uint8Array(await crypto.subtle.digest("SHA-256", view)));
}
