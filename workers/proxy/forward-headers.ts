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
  const named = new Set(
    (incoming.get("connection") ?? "")
      .split(",")
      .map((name) => name.trim().toLowerCase())
      .filter(Boolean),
  );
  const out = new Headers();
  for (const [name, value] of incoming) {
    const lower = name.toLowerCase();
    if (
      ALWAYS_STRIPPED.has(lower) ||
      named.has(lower) ||
      lower.startsWith("x-personalclaw-") ||
      lower.startsWith("cf-")
    )
      continue;
    out.append(name, value);
  }
  return out;
}
