// The address a request came from: what sign-in links and owner presence are bound to.
import { publicOriginOf } from "./public-origin";

/**
 * Locally, the address workerd saw on the socket (request.cf.clientIp is "ip:port"), without the
 * port; a CF-Connecting-IP header is then anyone's word and is never read. At the edge, the
 * address Cloudflare saw, which it writes into CF-Connecting-IP over whatever a client sent.
 */
export function clientAddress(request: Request, env: { PERSONALCLAW_PUBLIC_ORIGIN?: string }): string {
  if (publicOriginOf(env).mode === "edge") return request.headers.get("cf-connecting-ip")?.trim() ?? "";
  const raw = String((request as { cf?: { clientIp?: string } }).cf?.clientIp ?? "");
  const colon = raw.lastIndexOf(":");
  const host = colon > 0 ? raw.slice(0, colon) : raw;
  return host.replace(/^\[|\]$/g, "");
}
