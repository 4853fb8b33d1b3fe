// The headers a proxied HTTP request and its answer carry across the broker: those of one hop
// stay on it, and the upstream sees the Host it was dialled for (docs/design/egress.md).
import type http from "node:http";

/** Headers of one hop only: never passed on, in either direction. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "expect",
]);

/**
 * The request's headers for upstream, as name/value pairs: hop-by-hop ones and those its
 * Connection header names are dropped, and Host is the authority of the URL it was granted
 * and dialled for. The app's own Host never goes on: behind a granted address it would pick
 * another virtual host than the one the owner consented to.
 */
export function upstreamHeaders(req: http.IncomingMessage, authority: string): string[] {
  const named = new Set(
    (req.headers.connection ?? "")
      .split(",")
      .map((token) => token.trim().toLowerCase())
      .filter(Boolean),
  );
  const out: string[] = ["Host", authority];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!;
    const lower = name.toLowerCase();
    if (lower === "host" || HOP_BY_HOP.has(lower) || named.has(lower)) continue;
    out.push(name, req.rawHeaders[i + 1]!);
  }
  // Node decoded a chunked body; it goes on chunked again (a Content-Length one as it is).
  if (req.headers["transfer-encoding"] !== undefined) out.push("Transfer-Encoding", "chunked");
  return out;
}

/** The upstream answer's headers for the app: the same, less those of one hop. */
export function downstreamHeaders(res: http.IncomingMessage): string[] {
  const named = new Set(
    (res.headers.connection ?? "")
      .split(",")
      .map((token) => token.trim().toLowerCase())
      .filter(Boolean),
  );
  const out: string[] = [];
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
    const lower = res.rawHeaders[i]!.toLowerCase();
    if (HOP_BY_HOP.has(lower) || named.has(lower)) continue;
    out.push(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
  }
  return out;
}
