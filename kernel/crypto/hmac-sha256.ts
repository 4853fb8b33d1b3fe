// HMAC-SHA256 (RFC 2104 over FIPS 180-4), computed synchronously. The security log MACs every
// row in the turn that writes it, and the proxy signs every forwarded request: WebCrypto's
// sign() answers a promise, and awaiting it cost more per call in workerd than the whole digest
// does here (docs/performance.md, "Security log appends, second round"; no well-kept library
// measured faster than WebCrypto there). Its output is byte-for-byte WebCrypto's:
// hmac-sha256.test.ts pins it against crypto.subtle and the RFC 4231 vectors. Nothing here
// branches on or indexes by a key or message byte.

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

/** The running state, the padded last blocks and the inner digest: one of each, reused by every call. */
const state = new Int32Array(8);
const tail = new Uint8Array(2 * BLOCK);
const tailView = new DataView(tail.buffer);
/**
 * The outer hash's one block: the inner digest, then its padding, which never changes (a pad
 * block and 32 bytes hashed: 768 bits).
 */
const outerBlock = new Uint8Array(BLOCK);
const outerBlockView = new DataView(outerBlock.buffer);
outerBlock[32] = 0x80;
outerBlockView.setUint32(BLOCK - 4, (BLOCK + 32) * 8);

/**
 * Compresses `blocks` 64-byte blocks of `view`, from byte `at`, into `into`. The schedule's
 * sixteen live words and the eight working words are locals, sixteen rounds written out: typed
 * array reads and writes were most of the cost of the one-round loop in workerd.
 */
function compress(into: Int32Array, view: DataView, at: number, blocks: number): void {
  const k = ROUND_CONSTANTS;
  let h0 = into[0]!;
  let h1 = into[1]!;
  let h2 = into[2]!;
  let h3 = into[3]!;
  let h4 = into[4]!;
  let h5 = into[5]!;
  let h6 = into[6]!;
  let h7 = into[7]!;
  for (; blocks > 0; blocks--, at += BLOCK) {
    let w0 = view.getInt32(at + 0);
    let w1 = view.getInt32(at + 4);
    let w2 = view.getInt32(at + 8);
    let w3 = view.getInt32(at + 12);
    let w4 = view.getInt32(at + 16);
    let w5 = view.getInt32(at + 20);
    let w6 = view.getInt32(at + 24);
    let w7 = view.getInt32(at + 28);
    let w8 = view.getInt32(at + 32);
    let w9 = view.getInt32(at + 36);
    let w10 = view.getInt32(at + 40);
    let w11 = view.getInt32(at + 44);
    let w12 = view.getInt32(at + 48);
    let w13 = view.getInt32(at + 52);
    let w14 = view.getInt32(at + 56);
    let w15 = view.getInt32(at + 60);
    let a = h0;
    let b = h1;
    let c = h2;
    let d = h3;
    let e = h4;
    let f = h5;
    let g = h6;
    let h = h7;
    let t: number;
    for (let i = 0; i < 64; i += 16) {
      // From round 16 on, word j becomes W[i + j] = σ1(W[-2]) + W[-7] + σ0(W[-15]) + W[-16].
      if (i > 0) {
        w0 = (w0 + w9 + (((w1 >>> 7) | (w1 << 25)) ^ ((w1 >>> 18) | (w1 << 14)) ^ (w1 >>> 3))) | 0;
        w0 = (w0 + (((w14 >>> 17) | (w14 << 15)) ^ ((w14 >>> 19) | (w14 << 13)) ^ (w14 >>> 10))) | 0;
        w1 = (w1 + w10 + (((w2 >>> 7) | (w2 << 25)) ^ ((w2 >>> 18) | (w2 << 14)) ^ (w2 >>> 3))) | 0;
        w1 = (w1 + (((w15 >>> 17) | (w15 << 15)) ^ ((w15 >>> 19) | (w15 << 13)) ^ (w15 >>> 10))) | 0;
        w2 = (w2 + w11 + (((w3 >>> 7) | (w3 << 25)) ^ ((w3 >>> 18) | (w3 << 14)) ^ (w3 >>> 3))) | 0;
        w2 = (w2 + (((w0 >>> 17) | (w0 << 15)) ^ ((w0 >>> 19) | (w0 << 13)) ^ (w0 >>> 10))) | 0;
        w3 = (w3 + w12 + (((w4 >>> 7) | (w4 << 25)) ^ ((w4 >>> 18) | (w4 << 14)) ^ (w4 >>> 3))) | 0;
        w3 = (w3 + (((w1 >>> 17) | (w1 << 15)) ^ ((w1 >>> 19) | (w1 << 13)) ^ (w1 >>> 10))) | 0;
        w4 = (w4 + w13 + (((w5 >>> 7) | (w5 << 25)) ^ ((w5 >>> 18) | (w5 << 14)) ^ (w5 >>> 3))) | 0;
        w4 = (w4 + (((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10))) | 0;
        w5 = (w5 + w14 + (((w6 >>> 7) | (w6 << 25)) ^ ((w6 >>> 18) | (w6 << 14)) ^ (w6 >>> 3))) | 0;
        w5 = (w5 + (((w3 >>> 17) | (w3 << 15)) ^ ((w3 >>> 19) | (w3 << 13)) ^ (w3 >>> 10))) | 0;
        w6 = (w6 + w15 + (((w7 >>> 7) | (w7 << 25)) ^ ((w7 >>> 18) | (w7 << 14)) ^ (w7 >>> 3))) | 0;
        w6 = (w6 + (((w4 >>> 17) | (w4 << 15)) ^ ((w4 >>> 19) | (w4 << 13)) ^ (w4 >>> 10))) | 0;
        w7 = (w7 + w0 + (((w8 >>> 7) | (w8 << 25)) ^ ((w8 >>> 18) | (w8 << 14)) ^ (w8 >>> 3))) | 0;
        w7 = (w7 + (((w5 >>> 17) | (w5 << 15)) ^ ((w5 >>> 19) | (w5 << 13)) ^ (w5 >>> 10))) | 0;
        w8 = (w8 + w1 + (((w9 >>> 7) | (w9 << 25)) ^ ((w9 >>> 18) | (w9 << 14)) ^ (w9 >>> 3))) | 0;
        w8 = (w8 + (((w6 >>> 17) | (w6 << 15)) ^ ((w6 >>> 19) | (w6 << 13)) ^ (w6 >>> 10))) | 0;
        w9 = (w9 + w2 + (((w10 >>> 7) | (w10 << 25)) ^ ((w10 >>> 18) | (w10 << 14)) ^ (w10 >>> 3))) | 0;
        w9 = (w9 + (((w7 >>> 17) | (w7 << 15)) ^ ((w7 >>> 19) | (w7 << 13)) ^ (w7 >>> 10))) | 0;
        w10 = (w10 + w3 + (((w11 >>> 7) | (w11 << 25)) ^ ((w11 >>> 18) | (w11 << 14)) ^ (w11 >>> 3))) | 0;
        w10 = (w10 + (((w8 >>> 17) | (w8 << 15)) ^ ((w8 >>> 19) | (w8 << 13)) ^ (w8 >>> 10))) | 0;
        w11 = (w11 + w4 + (((w12 >>> 7) | (w12 << 25)) ^ ((w12 >>> 18) | (w12 << 14)) ^ (w12 >>> 3))) | 0;
        w11 = (w11 + (((w9 >>> 17) | (w9 << 15)) ^ ((w9 >>> 19) | (w9 << 13)) ^ (w9 >>> 10))) | 0;
        w12 = (w12 + w5 + (((w13 >>> 7) | (w13 << 25)) ^ ((w13 >>> 18) | (w13 << 14)) ^ (w13 >>> 3))) | 0;
        w12 = (w12 + (((w10 >>> 17) | (w10 << 15)) ^ ((w10 >>> 19) | (w10 << 13)) ^ (w10 >>> 10))) | 0;
        w13 = (w13 + w6 + (((w14 >>> 7) | (w14 << 25)) ^ ((w14 >>> 18) | (w14 << 14)) ^ (w14 >>> 3))) | 0;
        w13 = (w13 + (((w11 >>> 17) | (w11 << 15)) ^ ((w11 >>> 19) | (w11 << 13)) ^ (w11 >>> 10))) | 0;
        w14 = (w14 + w7 + (((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3))) | 0;
        w14 = (w14 + (((w12 >>> 17) | (w12 << 15)) ^ ((w12 >>> 19) | (w12 << 13)) ^ (w12 >>> 10))) | 0;
        w15 = (w15 + w8 + (((w0 >>> 7) | (w0 << 25)) ^ ((w0 >>> 18) | (w0 << 14)) ^ (w0 >>> 3))) | 0;
        w15 = (w15 + (((w13 >>> 17) | (w13 << 15)) ^ ((w13 >>> 19) | (w13 << 13)) ^ (w13 >>> 10))) | 0;
      }
      // Round i + j; the working words rotate by renaming instead of moving.
      t = (h + (g ^ (e & (f ^ g))) + k[i + 0]! + w0) | 0;
      t = (t + (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7)))) | 0;
      d = (d + t) | 0;
      h = (t + (((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10)))) | 0;
      h = (h + ((a & b) | (c & (a | b)))) | 0;
      t = (g + (f ^ (d & (e ^ f))) + k[i + 1]! + w1) | 0;
      t = (t + (((d >>> 6) | (d << 26)) ^ ((d >>> 11) | (d << 21)) ^ ((d >>> 25) | (d << 7)))) | 0;
      c = (c + t) | 0;
      g = (t + (((h >>> 2) | (h << 30)) ^ ((h >>> 13) | (h << 19)) ^ ((h >>> 22) | (h << 10)))) | 0;
      g = (g + ((h & a) | (b & (h | a)))) | 0;
      t = (f + (e ^ (c & (d ^ e))) + k[i + 2]! + w2) | 0;
      t = (t + (((c >>> 6) | (c << 26)) ^ ((c >>> 11) | (c << 21)) ^ ((c >>> 25) | (c << 7)))) | 0;
      b = (b + t) | 0;
      f = (t + (((g >>> 2) | (g << 30)) ^ ((g >>> 13) | (g << 19)) ^ ((g >>> 22) | (g << 10)))) | 0;
      f = (f + ((g & h) | (a & (g | h)))) | 0;
      t = (e + (d ^ (b & (c ^ d))) + k[i + 3]! + w3) | 0;
      t = (t + (((b >>> 6) | (b << 26)) ^ ((b >>> 11) | (b << 21)) ^ ((b >>> 25) | (b << 7)))) | 0;
      a = (a + t) | 0;
      e = (t + (((f >>> 2) | (f << 30)) ^ ((f >>> 13) | (f << 19)) ^ ((f >>> 22) | (f << 10)))) | 0;
      e = (e + ((f & g) | (h & (f | g)))) | 0;
      t = (d + (c ^ (a & (b ^ c))) + k[i + 4]! + w4) | 0;
      t = (t + (((a >>> 6) | (a << 26)) ^ ((a >>> 11) | (a << 21)) ^ ((a >>> 25) | (a << 7)))) | 0;
      h = (h + t) | 0;
      d = (t + (((e >>> 2) | (e << 30)) ^ ((e >>> 13) | (e << 19)) ^ ((e >>> 22) | (e << 10)))) | 0;
      d = (d + ((e & f) | (g & (e | f)))) | 0;
      t = (c + (b ^ (h & (a ^ b))) + k[i + 5]! + w5) | 0;
      t = (t + (((h >>> 6) | (h << 26)) ^ ((h >>> 11) | (h << 21)) ^ ((h >>> 25) | (h << 7)))) | 0;
      g = (g + t) | 0;
      c = (t + (((d >>> 2) | (d << 30)) ^ ((d >>> 13) | (d << 19)) ^ ((d >>> 22) | (d << 10)))) | 0;
      c = (c + ((d & e) | (f & (d | e)))) | 0;
      t = (b + (a ^ (g & (h ^ a))) + k[i + 6]! + w6) | 0;
      t = (t + (((g >>> 6) | (g << 26)) ^ ((g >>> 11) | (g << 21)) ^ ((g >>> 25) | (g << 7)))) | 0;
      f = (f + t) | 0;
      b = (t + (((c >>> 2) | (c << 30)) ^ ((c >>> 13) | (c << 19)) ^ ((c >>> 22) | (c << 10)))) | 0;
      b = (b + ((c & d) | (e & (c | d)))) | 0;
      t = (a + (h ^ (f & (g ^ h))) + k[i + 7]! + w7) | 0;
      t = (t + (((f >>> 6) | (f << 26)) ^ ((f >>> 11) | (f << 21)) ^ ((f >>> 25) | (f << 7)))) | 0;
      e = (e + t) | 0;
      a = (t + (((b >>> 2) | (b << 30)) ^ ((b >>> 13) | (b << 19)) ^ ((b >>> 22) | (b << 10)))) | 0;
      a = (a + ((b & c) | (d & (b | c)))) | 0;
      t = (h + (g ^ (e & (f ^ g))) + k[i + 8]! + w8) | 0;
      t = (t + (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7)))) | 0;
      d = (d + t) | 0;
      h = (t + (((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10)))) | 0;
      h = (h + ((a & b) | (c & (a | b)))) | 0;
      t = (g + (f ^ (d & (e ^ f))) + k[i + 9]! + w9) | 0;
      t = (t + (((d >>> 6) | (d << 26)) ^ ((d >>> 11) | (d << 21)) ^ ((d >>> 25) | (d << 7)))) | 0;
      c = (c + t) | 0;
      g = (t + (((h >>> 2) | (h << 30)) ^ ((h >>> 13) | (h << 19)) ^ ((h >>> 22) | (h << 10)))) | 0;
      g = (g + ((h & a) | (b & (h | a)))) | 0;
      t = (f + (e ^ (c & (d ^ e))) + k[i + 10]! + w10) | 0;
      t = (t + (((c >>> 6) | (c << 26)) ^ ((c >>> 11) | (c << 21)) ^ ((c >>> 25) | (c << 7)))) | 0;
      b = (b + t) | 0;
      f = (t + (((g >>> 2) | (g << 30)) ^ ((g >>> 13) | (g << 19)) ^ ((g >>> 22) | (g << 10)))) | 0;
      f = (f + ((g & h) | (a & (g | h)))) | 0;
      t = (e + (d ^ (b & (c ^ d))) + k[i + 11]! + w11) | 0;
      t = (t + (((b >>> 6) | (b << 26)) ^ ((b >>> 11) | (b << 21)) ^ ((b >>> 25) | (b << 7)))) | 0;
      a = (a + t) | 0;
      e = (t + (((f >>> 2) | (f << 30)) ^ ((f >>> 13) | (f << 19)) ^ ((f >>> 22) | (f << 10)))) | 0;
      e = (e + ((f & g) | (h & (f | g)))) | 0;
      t = (d + (c ^ (a & (b ^ c))) + k[i + 12]! + w12) | 0;
      t = (t + (((a >>> 6) | (a << 26)) ^ ((a >>> 11) | (a << 21)) ^ ((a >>> 25) | (a << 7)))) | 0;
      h = (h + t) | 0;
      d = (t + (((e >>> 2) | (e << 30)) ^ ((e >>> 13) | (e << 19)) ^ ((e >>> 22) | (e << 10)))) | 0;
      d = (d + ((e & f) | (g & (e | f)))) | 0;
      t = (c + (b ^ (h & (a ^ b))) + k[i + 13]! + w13) | 0;
      t = (t + (((h >>> 6) | (h << 26)) ^ ((h >>> 11) | (h << 21)) ^ ((h >>> 25) | (h << 7)))) | 0;
      g = (g + t) | 0;
      c = (t + (((d >>> 2) | (d << 30)) ^ ((d >>> 13) | (d << 19)) ^ ((d >>> 22) | (d << 10)))) | 0;
      c = (c + ((d & e) | (f & (d | e)))) | 0;
      t = (b + (a ^ (g & (h ^ a))) + k[i + 14]! + w14) | 0;
      t = (t + (((g >>> 6) | (g << 26)) ^ ((g >>> 11) | (g << 21)) ^ ((g >>> 25) | (g << 7)))) | 0;
      f = (f + t) | 0;
      b = (t + (((c >>> 2) | (c << 30)) ^ ((c >>> 13) | (c << 19)) ^ ((c >>> 22) | (c << 10)))) | 0;
      b = (b + ((c & d) | (e & (c | d)))) | 0;
      t = (a + (h ^ (f & (g ^ h))) + k[i + 15]! + w15) | 0;
      t = (t + (((f >>> 6) | (f << 26)) ^ ((f >>> 11) | (f << 21)) ^ ((f >>> 25) | (f << 7)))) | 0;
      e = (e + t) | 0;
      a = (t + (((b >>> 2) | (b << 30)) ^ ((b >>> 13) | (b << 19)) ^ ((b >>> 22) | (b << 10)))) | 0;
      a = (a + ((b & c) | (d & (b | c)))) | 0;
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

/**
 * The view of the buffer the last message came in: the log MACs every row from one buffer, so
 * one view serves them all.
 */
let messageView: DataView = new DataView(new ArrayBuffer(0));

function viewOf(bytes: Uint8Array): DataView {
  const view = messageView;
  if (view.buffer !== bytes.buffer || view.byteOffset !== bytes.byteOffset || view.byteLength !== bytes.byteLength)
    messageView = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return messageView;
}

/** Hashes `length` bytes of `message` into a state that has absorbed `absorbed`, then the FIPS 180-4 padding. */
function finish(into: Int32Array, message: Uint8Array, view: DataView, length: number, absorbed: number): void {
  const whole = Math.floor(length / BLOCK);
  compress(into, view, 0, whole);
  const rest = length - whole * BLOCK;
  const blocks = rest < BLOCK - 8 ? 1 : 2;
  tail.fill(0, 0, blocks * BLOCK);
  for (let i = 0, from = whole * BLOCK; i < rest; i++) tail[i] = message[from + i]!;
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

/** SHA-256 of `message` (32 bytes): how a key longer than one block enters HMAC. */
function sha256(message: Uint8Array): Uint8Array {
  const into = INITIAL_STATE.slice();
  finish(into, message, new DataView(message.buffer, message.byteOffset, message.byteLength), message.length, 0);
  const out = new Uint8Array(32);
  const view = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) view.setInt32(4 * i, into[i]!);
  return out;
}

/** Prepares an HMAC-SHA256 key; one longer than a block is hashed first (RFC 2104). */
export function prepareHmacKey(key: Uint8Array): HmacKey {
  const pad = new Uint8Array(BLOCK);
  const view = new DataView(pad.buffer);
  pad.set(key.length > BLOCK ? sha256(key) : key);
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
  finish(state, message, viewOf(message), length, BLOCK);
  for (let i = 0; i < 8; i++) outerBlockView.setInt32(4 * i, state[i]!);
  state.set(key.outer);
  compress(state, outerBlockView, 0, 1);
  for (let i = 0; i < 8; i++) {
    const word = state[i]!;
    out[4 * i] = word >>> 24;
    out[4 * i + 1] = word >>> 16;
    out[4 * i + 2] = word >>> 8;
    out[4 * i + 3] = word;
  }
}

/** HMAC-SHA256(key, message) as a fresh 32-byte array. */
export function hmacSha256(key: HmacKey, message: Uint8Array): Uint8Array {
  const out = new Uint8Array(32);
  hmacSha256Into(key, message, message.length, out);
  return out;
}
