// HMAC-SHA256 (RFC 2104 over FIPS 180-4), computed synchronously. The log MACs every row in
// the turn that writes it: WebCrypto's sign() answers a promise and cost more per row than the
// whole digest does here (docs/performance.md, "Security log appends, second round"). Its
// output is byte-for-byte WebCrypto's; hmac-sha256.test.ts pins it against crypto.subtle and
// the RFC 4231 vectors. Nothing here branches on or indexes by a key or message byte.

const ROUND_CONSTANTS = Int32Array.from([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);
const INITIAL_STATE = Int32Array.from([
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
]);
const BLOCK = 64;

/** The message schedule, the running state, the padded last blocks and the inner digest: one of each, reused by every call. */
const schedule = new Int32Array(64);
const state = new Int32Array(8);
const tail = new Uint8Array(2 * BLOCK);
const tailView = new DataView(tail.buffer);
const innerDigest = new Uint8Array(32);
const innerDigestView = new DataView(innerDigest.buffer);

/** Compresses `blocks` 64-byte blocks of `view`, from byte `at`, into `into`. */
function compress(into: Int32Array, view: DataView, at: number, blocks: number): void {
  const w = schedule;
  let h0 = into[0]!;
  let h1 = into[1]!;
  let h2 = into[2]!;
  let h3 = into[3]!;
  let h4 = into[4]!;
  let h5 = into[5]!;
  let h6 = into[6]!;
  let h7 = into[7]!;
  for (; blocks > 0; blocks--, at += BLOCK) {
    for (let i = 0; i < 16; i++) w[i] = view.getInt32(at + 4 * i);
    for (let i = 16; i < 64; i++) {
      const x = w[i - 15]!;
      const y = w[i - 2]!;
      const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
      const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
      w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) | 0;
    }
    let a = h0;
    let b = h1;
    let c = h2;
    let d = h3;
    let e = h4;
    let f = h5;
    let g = h6;
    let h = h7;
    for (let i = 0; i < 64; i++) {
      const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (h + s1 + (g ^ (e & (f ^ g))) + ROUND_CONSTANTS[i]! + w[i]!) | 0;
      const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (s0 + ((a & b) | (c & (a | b)))) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
    h5 = (h5 + f) | 0;
    h6 = (h6 + g) | 0;
    h7 = (h7 + h) | 0;
  }
  into[0] = h0;
  into[1] = h1;
  into[2] = h2;
  into[3] = h3;
  into[4] = h4;
  into[5] = h5;
  into[6] = h6;
  into[7] = h7;
}

/** Hashes the first `length` bytes of `message` into a state that has absorbed `absorbed` bytes, and pads it as FIPS 180-4 says. */
function finish(into: Int32Array, message: Uint8Array, length: number, absorbed: number): void {
  const whole = Math.floor(length / BLOCK);
  compress(into, new DataView(message.buffer, message.byteOffset, message.byteLength), 0, whole);
  const rest = length - whole * BLOCK;
  const blocks = rest < BLOCK - 8 ? 1 : 2;
  tail.fill(0, 0, blocks * BLOCK);
  tail.set(message.subarray(whole * BLOCK, length));
  tail[rest] = 0x80;
  const bits = (absorbed + length) * 8;
  tailView.setUint32(blocks * BLOCK - 8, Math.floor(bits / 0x1_0000_0000));
  tailView.setUint32(blocks * BLOCK - 4, bits >>> 0);
  compress(into, tailView, 0, blocks);
}

/** A key with its inner and outer pad blocks already compressed: a mac then costs the message's blocks and one more. */
export interface HmacKey {
  readonly inner: Int32Array;
  readonly outer: Int32Array;
}

/** Prepares an HMAC-SHA256 key of at most one block (the log's keys are 32 bytes). */
export function prepareHmacKey(key: Uint8Array): HmacKey {
  if (key.length > BLOCK) throw new RangeError("an HMAC key here is at most 64 bytes");
  const pad = new Uint8Array(BLOCK);
  const view = new DataView(pad.buffer);
  pad.set(key);
  for (let i = 0; i < BLOCK; i++) pad[i] ^= 0x36;
  const inner = INITIAL_STATE.slice();
  compress(inner, view, 0, 1);
  for (let i = 0; i < BLOCK; i++) pad[i] ^= 0x36 ^ 0x5c;
  const outer = INITIAL_STATE.slice();
  compress(outer, view, 0, 1);
  pad.fill(0);
  return { inner, outer };
}

/** Writes HMAC-SHA256(key, the first `length` bytes of `message`) into `out` (32 bytes). */
export function hmacSha256Into(key: HmacKey, message: Uint8Array, length: number, out: Uint8Array): void {
  state.set(key.inner);
  finish(state, message, length, BLOCK);
  for (let i = 0; i < 8; i++) innerDigestView.setInt32(4 * i, state[i]!);
  state.set(key.outer);
  finish(state, innerDigest, 32, BLOCK);
  const view = new DataView(out.buffer, out.byteOffset, 32);
  for (let i = 0; i < 8; i++) view.setInt32(4 * i, state[i]!);
}

/** HMAC-SHA256(key, message) as a fresh 32-byte array. */
export function hmacSha256(key: HmacKey, message: Uint8Array): Uint8Array {
  const out = new Uint8Array(32);
  hmacSha256Into(key, message, message.length, out);
  return out;
}
