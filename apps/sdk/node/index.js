// @personalclaw/app-sdk: verifies the gateway's X-PersonalClaw-Proxy signature in a Node
// app backend. A backend listens on 127.0.0.1, where any local process can reach its port
// directly; the signature proves a request came through the gateway's proxy, which checked
// the owner's credential and the app's permissions first (PROXY-11, PROXY-15). It does
// not encrypt loopback and does not resist a process that can read the app's secret.
//
// Format (kernel/crypto/proxy-signature.ts is the source of truth; the reasons are in
// docs/design/proxy-signature.md):
//   X-PersonalClaw-Proxy: <ts>:<nonce>:<hmac_hex>
//   nonce    = 32 lower-case hex characters, fresh random bits for every request
//   hmac_hex = lower-case hex HMAC-SHA256(UTF-8 bytes of PERSONALCLAW_APP_SECRET,
//              "<ts>:<nonce>:<METHOD>:<target>:<sha256_hex(body)>")
// No dependencies: this file is vendored into app folders that install without a registry.
import { createHash, createHmac, timingSafeEqual } from "node:crypto";

/** The signature header, lower-case as Node presents header names. */
export const PROXY_SIGNATURE_HEADER = "x-personalclaw-proxy";

/** Every refusal answers this status and this one body, whatever failed. */
export const REFUSAL_STATUS = 401;
export const REFUSAL_BODY =
  '{"error":{"code":"proxy_signature_invalid","message":"This request was not signed by the gateway."}}';

/** A body over maxBodyBytes answers this status and body before the route runs. */
export const TOO_LARGE_STATUS = 413;
export const TOO_LARGE_BODY =
  '{"error":{"code":"body_too_large","message":"The request body is larger than this backend accepts."}}';

// Canonical only: digits without sign, leading zero or fraction, then exactly 32 lower-case
// hex digits of nonce, then exactly 64 lower-case hex digits of HMAC. One spelling per
// signature keeps the replay cache sound: if `0<ts>` or an upper-case nonce were accepted, a
// captured signature could be replayed in a new spelling that the cache has not seen.
const SIGNATURE_SHAPE = /^(0|[1-9][0-9]{0,14}):([0-9a-f]{32}):([0-9a-f]{64})$/;

const DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;

// Optional whitespace around a header value is not part of it (RFC 9110 5.5); nothing else is stripped.
function stripOws(value) {
  return String(value).replace(/^[ \t]+|[ \t]+$/g, "");
}

function defaultClock() {
  return Math.floor(Date.now() / 1000);
}

function logRefusal(reason, info) {
  // PROXY-13: a backend cannot reach the gateway's security log, so a denial is one
  // structured stderr line. The path only: a query string may carry data.
  process.stderr.write(
    JSON.stringify({
      level: "warning",
      event: "proxy_signature_refused",
      reason,
      method: info.method,
      path: info.path,
    }) + "\n",
  );
}

// A string target is bytes on the wire. Node and Python decode the request line as
// latin1, so re-encoding latin1 gives back the exact bytes; a string carrying a character
// above U+00FF did not come off a wire and is taken as UTF-8, as the signer encodes it.
function targetBytes(target) {
  if (typeof target !== "string") return Buffer.from(target);
  return /[^\u0000-\u00ff]/.test(target) ? Buffer.from(target, "utf8") : Buffer.from(target, "latin1");
}

function pathOf(target) {
  const s = typeof target === "string" ? target : Buffer.from(target).toString("latin1");
  const q = s.indexOf("?");
  return q === -1 ? s : s.slice(0, q);
}

function isVerifier(x) {
  return x !== null && typeof x === "object" && typeof x.verify === "function" && typeof x.isExempt === "function";
}

/**
 * Creates a verifier. With no secret (unset or empty) it fails closed: it says so once on
 * stderr and refuses every signed request.
 */
export function createVerifier({
  secret = process.env.PERSONALCLAW_APP_SECRET,
  healthPath = "/health",
  windowS = 60,
  now = defaultClock,
  maxBodyBytes = DEFAULT_MAX_BODY_BYTES,
  onRefusal = logRefusal,
} = {}) {
  const hasSecret = typeof secret === "string" && secret.length > 0;
  if (!hasSecret) {
    process.stderr.write(
      "personalclaw app-sdk: PERSONALCLAW_APP_SECRET is missing or empty; every request except the health check will be refused with 401.\n",
    );
  }
  const key = hasSecret ? Buffer.from(secret, "utf8") : null;
  // Nonces of signatures already accepted, with the second after which the window refuses
  // their signature anyway. Keyed on the nonce, not the HMAC: a nonce is spent once, whatever
  // request it signed. Only verified signatures enter, so unsigned traffic cannot grow it.
  const seen = new Map();
  let prunedAt = -Infinity;

  function prune(t) {
    if (t === prunedAt) return;
    prunedAt = t;
    for (const [nonce, until] of seen) if (until < t) seen.delete(nonce);
  }

  /** Checks what can be checked before the body is read; returns a refusal reason or null. */
  function precheck(headerValues, t = now()) {
    if (!key) return "secret_missing";
    if (headerValues.length === 0) return "header_missing";
    // Two headers are refused even if one is valid: parsers disagree on which one wins.
    if (headerValues.length > 1) return "header_repeated";
    const m = SIGNATURE_SHAPE.exec(stripOws(headerValues[0]));
    if (!m) return "header_malformed";
    if (Math.abs(t - Number(m[1])) > windowS) return "timestamp_outside_window";
    return null;
  }

  /**
   * Verifies one request. headerValues: every X-PersonalClaw-Proxy value received (one per
   * header line). Returns {ok: true} or {ok: false, reason}. An accepted signature's nonce
   * is remembered, so any signature carrying it is refused within the window (replay).
   */
  function verify({ method, target, headerValues, body }) {
    const t = now();
    const early = precheck(headerValues, t);
    if (early) return { ok: false, reason: early };
    const [, tsText, nonce, macHex] = SIGNATURE_SHAPE.exec(stripOws(headerValues[0]));
    const bodyHash = createHash("sha256")
      .update(body ?? new Uint8Array())
      .digest("hex");
    const expected = createHmac("sha256", key)
      .update(Buffer.from(`${tsText}:${nonce}:${method}:`, "latin1"))
      .update(targetBytes(target))
      .update(Buffer.from(`:${bodyHash}`, "latin1"))
      .digest();
    // Both are 32 bytes (the shape check fixed the length), so the compare cannot throw.
    if (!timingSafeEqual(expected, Buffer.from(macHex, "hex"))) return { ok: false, reason: "signature_mismatch" };
    prune(t);
    if (seen.has(nonce)) return { ok: false, reason: "signature_replayed" };
    seen.set(nonce, Number(tsText) + windowS);
    return { ok: true };
  }

  /** The health check is exempt (PROXY-12): GET or HEAD on exactly healthPath, compared raw. */
  function isExempt(method, target) {
    // Compared before any decoding, so `/health/../api/x` or `/%68ealth` still needs a signature.
    return typeof healthPath === "string" && (method === "GET" || method === "HEAD") && pathOf(target) === healthPath;
  }

  return {
    hasSecret,
    maxBodyBytes,
    precheck,
    verify,
    isExempt,
    refuse(reason, method, target) {
      onRefusal(reason, { method, path: pathOf(target) });
    },
  };
}

function verifierFrom(opts) {
  return isVerifier(opts) ? opts : createVerifier(opts);
}

function nodeHeaderValues(req) {
  // headersDistinct keeps every line; req.headers would join repeats with ", ".
  if (req.headersDistinct) return req.headersDistinct[PROXY_SIGNATURE_HEADER] ?? [];
  const values = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i].toLowerCase() === PROXY_SIGNATURE_HEADER) values.push(req.rawHeaders[i + 1]);
  }
  return values;
}

function readNodeBody(req, limit) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    let done = false;
    req.on("data", (chunk) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) {
        done = true;
        req.pause();
        resolve(null);
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      if (!done) resolve(Buffer.concat(chunks));
    });
    req.on("error", reject);
  });
}

function answer(res, status, body) {
  // Connection: close, because the refused request's body may be left unread.
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    connection: "close",
  });
  res.end(body);
}

// Reads the body once and verifies; resolves to the body, or to null after answering.
async function admitNodeRequest(verifier, req, res) {
  const method = req.method;
  const target = req.url;
  if (verifier.isExempt(method, target)) {
    const body = await readNodeBody(req, verifier.maxBodyBytes);
    if (body === null) answer(res, TOO_LARGE_STATUS, TOO_LARGE_BODY);
    return body;
  }
  const headerValues = nodeHeaderValues(req);
  // Refuse before reading a body a request cannot be admitted with.
  const early = verifier.precheck(headerValues);
  if (early) {
    verifier.refuse(early, method, target);
    answer(res, REFUSAL_STATUS, REFUSAL_BODY);
    return null;
  }
  const body = await readNodeBody(req, verifier.maxBodyBytes);
  if (body === null) {
    verifier.refuse("body_too_large", method, target);
    answer(res, TOO_LARGE_STATUS, TOO_LARGE_BODY);
    return null;
  }
  const outcome = verifier.verify({ method, target, headerValues, body });
  if (!outcome.ok) {
    verifier.refuse(outcome.reason, method, target);
    answer(res, REFUSAL_STATUS, REFUSAL_BODY);
    return null;
  }
  return body;
}

/**
 * Wraps a node:http handler `(req, res, rawBody)`: the handler runs only for a verified
 * request (or the health check), with the body read once (also on req.rawBody).
 */
export function withSignature(handler, opts = {}) {
  const verifier = verifierFrom(opts);
  return async (req, res) => {
    let body;
    try {
      body = await admitNodeRequest(verifier, req, res);
    } catch {
      req.destroy();
      return;
    }
    if (body === null) return;
    req.rawBody = body;
    await handler(req, res, body);
  };
}

/**
 * Connect/Express-style middleware `(req, res, next)`: calls next() only for a verified
 * request, with the body read once on req.rawBody.
 */
export function requireProxySignature(opts = {}) {
  const verifier = verifierFrom(opts);
  return (req, res, next) => {
    admitNodeRequest(verifier, req, res).then(
      (body) => {
        if (body === null) return;
        req.rawBody = body;
        next();
      },
      (err) => next(err),
    );
  };
}

// The request target as received. Under @hono/node-server c.env.incoming is the raw
// IncomingMessage; elsewhere the URL string minus origin, which keeps a bare `?` that
// URL.search would drop. A runtime whose URL parser rewrote the target verifies only if
// the gateway signed the rewritten form.
function honoTarget(c) {
  const incoming = c.env && typeof c.env === "object" ? c.env.incoming : undefined;
  if (incoming && typeof incoming.url === "string") return incoming.url;
  const url = c.req.url;
  const start = url.indexOf("/", url.indexOf("//") + 2);
  const path = start === -1 ? "/" : url.slice(start);
  const hash = path.indexOf("#");
  return hash === -1 ? path : path.slice(0, hash);
}

// Under @hono/node-server every header line is still countable; the Fetch API joins
// repeats with ", ", which the shape check then refuses as malformed.
function honoHeaderValues(c) {
  const incoming = c.env && typeof c.env === "object" ? c.env.incoming : undefined;
  if (incoming && (incoming.headersDistinct || incoming.rawHeaders)) return nodeHeaderValues(incoming);
  const single = c.req.raw.headers.get(PROXY_SIGNATURE_HEADER);
  return single === null ? [] : [single];
}

function honoAnswer(c, status, body) {
  return c.body(body, status, { "content-type": "application/json" });
}

/**
 * Hono middleware (no import of hono): the route runs only for a verified request (or
 * the health check), with the body bytes on c.get('rawBody'). Repeated headers arrive
 * comma-joined through the Fetch API and are refused as malformed.
 */
export function honoVerifier(opts = {}) {
  const verifier = verifierFrom(opts);
  return async (c, next) => {
    const method = c.req.method;
    const target = honoTarget(c);
    const declared = Number(c.req.header("content-length") ?? "0");
    const exempt = verifier.isExempt(method, target);
    const headerValues = honoHeaderValues(c);
    if (!exempt) {
      const early = verifier.precheck(headerValues);
      if (early) {
        verifier.refuse(early, method, target);
        return honoAnswer(c, REFUSAL_STATUS, REFUSAL_BODY);
      }
    }
    if (declared > verifier.maxBodyBytes) {
      if (!exempt) verifier.refuse("body_too_large", method, target);
      return honoAnswer(c, TOO_LARGE_STATUS, TOO_LARGE_BODY);
    }
    // c.req caches this read, so a route may still call c.req.json() or c.req.text().
    const body = new Uint8Array(await c.req.arrayBuffer());
    if (body.byteLength > verifier.maxBodyBytes) {
      if (!exempt) verifier.refuse("body_too_large", method, target);
      return honoAnswer(c, TOO_LARGE_STATUS, TOO_LARGE_BODY);
    }
    if (!exempt) {
      const outcome = verifier.verify({ method, target, headerValues, body });
      if (!outcome.ok) {
        verifier.refuse(outcome.reason, method, target);
        return honoAnswer(c, REFUSAL_STATUS, REFUSAL_BODY);
      }
    }
    c.set("rawBody", body);
    await next();
  };
}
