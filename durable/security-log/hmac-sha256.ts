// HMAC-SHA256 (RFC 2104, FIPS 180-4) computed synchronously, with the key's inner and outer
// pad blocks compressed once. The chain signs every row in order, and WebCrypto's promise cost
// more per row than the hash itself; the unit test holds it equal to WebCrypto's HMAC.

const K = Uint32Array.from([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
  0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
  0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);
const IV = Uint32Array.from([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
const W = new Uint32Array(64);

function compress(h: Uint32Array, bytes: Uint8Array, off: number): void {
  for (let i = 0; i < 16; i++) {
    const j = off + i * 4;
    W[i] = (bytes[j]! << 24) | (bytes[j + 1]! << 16) | (bytes[j + 2]! << 8) | bytes[j + 3]!;
  }
  for (let i = 16; i < 64; i++) {
    const w15 = W[i - 15]!;
    const w2 = W[i - 2]!;
    const s0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3);
    const s1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10);
    W[i] = W[i - 16]! + s0 + W[i - 7]! + s1;
  }
  let a = h[0]!, b = h[1]!, c = h[2]!, d = h[3]!, e = h[4]!, f = h[5]!, g = h[6]!, k = h[7]!;
  for (let i = 0; i < 64; i++) {
    const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (k + s1 + ((e & f) ^ (~e & g)) + K[i]! + W[i]!) | 0;
    const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (s0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    k = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  h[0] = h[0]! + a;
  h[1] = h[1]! + b;
  h[2] = h[2]! + c;
  h[3] = h[3]! + d;
  h[4] = h[4]! + e;
  h[5] = h[5]! + f;
  h[6] = h[6]! + g;
  h[7] = h[7]! + k;
}

/** Hashes `message` onto `state` (which has already absorbed `prefixBytes` bytes) and pads: the digest. */
function finish(state: Uint32Array, message: Uint8Array, prefixBytes: number): Uint8Array {
  const h = Uint32Array.from(state);
  const full = message.length - (message.length % 64);
  for (let off = 0; off < full; off += 64) compress(h, message, off);
  const rest = message.length - full;
  const tail = new Uint8Array(rest < 56 ? 64 : 128);
  tail.set(message.subarray(full), 0);
  tail[rest] = 0x80;
  const bits = (prefixBytes + message.length) * 8;
  const view = new DataView(tail.buffer);
  view.setUint32(tail.length - 8, Math.floor(bits / 0x100000000));
  view.setUint32(tail.length - 4, bits >>> 0);
  for (let off = 0; off < tail.length; off += 64) compress(h, tail, off);
  const out = new Uint8Array(32);
  const outView = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) outView.setUint32(i * 4, h[i]!);
  return out;
}

/** An HMAC-SHA256 key with its pad blocks absorbed. */
export interface MacKey {
  readonly inner: Uint32Array;
  readonly outer: Uint32Array;
}

/** Prepares a key of at most 64 bytes (the chain's are 32). */
export function macKeyOf(key: Uint8Array): MacKey {
  if (key.length > 64) throw new Error("an HMAC key here is at most 64 bytes");
  const pad = new Uint8Array(64);
  const inner = Uint32Array.from(IV);
  const outer = Uint32Array.from(IV);
  for (let i = 0; i < 64; i++) pad[i] = (key[i] ?? 0) ^ 0x36;
  compress(inner, pad, 0);
  for (let i = 0; i < 64; i++) pad[i] = (key[i] ?? 0) ^ 0x5c;
  compress(outer, pad, 0);
  pad.fill(0);
  return { inner, outer };
}

/** HMAC-SHA256(key, message). */
export function hmacSha256(key: MacKey, message: Uint8Array): Uint8Array {
  return finish(key.outer, finish(key.inner, message, 64), 64);
}

/** Zeroes a key's pad states (an erased epoch). */
export function eraseMacKey(key: MacKey): void {
  key.inner.fill(0);
  key.outer.fill(0);
}
