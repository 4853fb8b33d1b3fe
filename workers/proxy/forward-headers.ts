// What a backend is handed of the client's headers. The owner's credentials (cookie,
// Authorization) and any identity or signature a client tried to supply are stripped, so a
// backend never holds a token it could replay against the whole gateway (PROXY-02).
const ALWAYS_STRIPPED = new Set([
  "cookie",
  "authorization",
  "x-internal-secret",
  "x-local-secret",
  "x-session-key",
  "host",
  "content-length",
  // Hop-by-hop (RFC 9110 §7.6.1): they describe one connection, not the request.
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "proxy-authenticate",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

/** The client's headers less credentials, X-PersonalClaw-*, hop-by-hop ones and any named in Connection. */
export function forwardableRequestHeaders(incoming: Headers): Headers {
  // One native copy, then the few names to drop: cheaper in workerd than appending each kept header.
  const out = new Headers(incoming);
  for (const name of incoming.keys()) {
    // Header names come out of a Headers object lower-cased.
    if (ALWAYS_STRIPPED.has(name) || name.startsWith("x-personalclaw-") || name.startsWith("cf-")) out.delete(name);
  }
  const connection = incoming.get("connection");
  if (connection !== null) {
    for (const listed of connection.split(",")) {
      const name = listed.trim();
      if (name !== "") out.delete(name);
    }
  }
  return out;
}
