// The proxy-signature format shared by the gateway's signer and every backend verifier
// (apps/sdk/node, apps/sdk/python). It proves a request came through the gateway's proxy,
// closing the direct-to-port bypass of a backend on 127.0.0.1 (PROXY-05..08, PROXY-15).
// It does not encrypt loopback and does not resist a local process that can read the
// app's secret file. docs/design/proxy-signature.md gives the reasons.
//
//   X-PersonalClaw-Proxy: <ts>:<nonce>:<hmac_hex>
//   hmac_hex = lower-case hex HMAC-SHA256(key, "<ts>:<nonce>:<METHOD>:<target>:<sha256_hex(body)>")
//
// - key: the UTF-8 bytes of the PERSONALCLAW_APP_SECRET string exactly as the backend sees
//   it (64 hex characters minted by the bridge -> a 64-byte key). It is NOT hex-decoded: a
//   verifier in any language can then use the environment value as-is, with no decoding
//   step that two implementations could disagree on.
// - ts: integer Unix seconds, canonical decimal (no sign, no leading zero, no fraction).
// - nonce: exactly 32 lower-case hex characters, 128 fresh random bits per request. Without
//   it the signature is a function of the second and the request, so two identical requests
//   in one second (a page fetching one URL twice) collide and the replay cache refuses the
//   second.
// - METHOD: the method exactly as on the request line.
// - target: the request target exactly as the backend receives it: `/api/<tail>` plus
//   `?<query>` only when a `?` goes on the wire. Nothing is decoded or normalized. The
//   signer must sign what it will SEND, not what it was asked: the URL parser encodes
//   spaces and non-ASCII and resolves dot segments, so sign wireTarget(url) of the URL
//   object handed to fetch. A target string is UTF-8 encoded.
// - body: the exact body bytes (a chunked body signs its de-chunked bytes); an empty body
//   hashes to sha256("").
// Verifiers accept |now - ts| <= SIGNATURE_WINDOW_S, compare in constant time, refuse a
// repeated header, refuse any header whose ts, nonce or HMAC is not in the canonical form,
// and accept each nonce once within the window.

import { hexOf, sha256Hex } from "./hex";
import { hmacSha256Into, prepareHmacKey, type HmacKey } from "./hmac-sha256";

/** The header that carries the signature. */
export const PROXY_SIGNATURE_HEADER = "X-PersonalClaw-Proxy";

/** A signature more than this many seconds from the verifier's clock is refused. */
export const SIGNATURE_WINDOW_S = 60;

const utf8 = new TextEncoder();

/**
 * The request target workerd's fetch(url) puts on the request line: the serialized URL after
 * its authority, without the fragment. A bare `?` stays (workerd sends it; URL.search would
 * drop it, and Node's fetch does not send it).
 */
export function wireTarget(url: URL): string {
  // A serialized http(s) URL has `#` only where the fragment starts and `/` only after the host.
  const href = url.href.split("#", 1)[0]!;
  return href.slice(href.indexOf("/", href.indexOf("//") + 2));
}

/** The exact string the HMAC covers. */
export function signatureMessage(
  ts: number,
  nonce: string,
  method: string,
  target: string,
  bodySha256Hex: string,
): string {
  return `${ts}:${nonce}:${method}:${target}:${bodySha256Hex}`;
}

// One spelling only: verifiers refuse upper-case or any other length.
const NONCE_SHAPE = /^[0-9a-f]{32}$/;

// 128 bits: two requests drawing the same nonce within one window is not a practical event.
function freshNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return hexOf(bytes);
}

// Most proxied requests (GET, HEAD) carry no body: its hash is this constant, not a digest call per request.
const EMPTY_BODY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

// A key's pad blocks are prepared once: keep the few current apps' keys.
const keys = new Map<string, HmacKey>();
function signingKey(secret: string): HmacKey {
  let key = keys.get(secret);
  if (!key) {
    if (keys.size >= 64) keys.clear();
    key = prepareHmacKey(utf8.encode(secret));
    keys.set(secret, key);
  }
  return key;
}
const mac = new Uint8Array(32);

/**
 * The header value `<ts>:<nonce>:<hmac_hex>` for one request. Production omits `nonce` and
 * gets a fresh random one; tests pass a fixed one. Throws on a missing secret, a
 * non-canonical ts or a nonce verifiers would refuse.
 */
export async function signProxyRequest(req: {
  secret: string;
  ts: number;
  method: string;
  target: string;
  body: Uint8Array;
  nonce?: string;
}): Promise<string> {
  // An empty key would still produce a valid-looking HMAC that anyone can forge.
  if (typeof req.secret !== "string" || req.secret.length === 0)
    throw new Error("proxy signature: the app has no secret");
  // A fractional or negative ts would print a form every verifier refuses.
  if (!Number.isSafeInteger(req.ts) || req.ts < 0) throw new Error("proxy signature: ts must be integer Unix seconds");
  const nonce = req.nonce ?? freshNonce();
  if (typeof nonce !== "string" || !NONCE_SHAPE.test(nonce))
    throw new Error("proxy signature: nonce must be 32 lower-case hex characters");
  const bodyHash = req.body.byteLength === 0 ? EMPTY_BODY_SHA256 : await sha256Hex(req.body);
  const message = utf8.encode(signatureMessage(req.ts, nonce, req.method, req.target, bodyHash));
  // Synchronous: a GET's signature awaits nothing (hmac-sha256.ts says why).
  hmacSha256Into(signingKey(req.secret), message, message.length, mac);
  return `${req.ts}:${nonce}:${hexOf(mac)}`;
}
