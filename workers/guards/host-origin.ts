// Step 1 of every request. The Host check is what defeats DNS rebinding: a page on
// evil.example that re-points its name at 127.0.0.1 still sends `Host: evil.example`.
// The Origin check stops another site's page from writing through the owner's browser.
import { GatewayError } from "../../kernel/contracts/errors";
import type { ParsedRequest } from "./parsed-request";
import { publicOriginOf } from "./public-origin";
import { isAppBackendPath, isGatewayApiPath } from "./request-path";

const STATE_CHANGING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** The Host values that name this gateway, and the scheme of its own pages' origin. */
export class GatewayHosts extends Set<string> {
  constructor(
    names: Iterable<string>,
    readonly scheme: "http" | "https",
  ) {
    super(names);
  }
}

/** The Host values that name a local gateway: loopback names on its port, plus configured hosts. */
export function allowedHosts(port: string, configured: string): GatewayHosts {
  const hosts = new GatewayHosts([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`], "http");
  for (const name of configured
    .split(",")
    .map((value) => value.trim().toLowerCase())
    .filter(Boolean)) {
    hosts.add(name.includes(":") && !name.startsWith("[") ? name : `${name}:${port}`);
  }
  return hosts;
}

let hostsCache: { key: string; hosts: GatewayHosts } | null = null;

/**
 * The Host values of this gateway, from its bindings (computed once per isolate). At the edge
 * (PERSONALCLAW_PUBLIC_ORIGIN set) the one Host is the public origin's and its pages are https://;
 * an invalid public origin leaves no Host at all, so every request is refused.
 */
export function hostsOf(env: {
  GATEWAY_PORT: string;
  ALLOWED_HOSTS: string;
  PERSONALCLAW_PUBLIC_ORIGIN?: string;
}): GatewayHosts {
  const key = `${env.GATEWAY_PORT}|${env.ALLOWED_HOSTS}|${env.PERSONALCLAW_PUBLIC_ORIGIN ?? ""}`;
  if (hostsCache?.key !== key) {
    const setting = publicOriginOf(env);
    const hosts =
      setting.mode === "local"
        ? allowedHosts(env.GATEWAY_PORT, env.ALLOWED_HOSTS ?? "")
        : new GatewayHosts(setting.mode === "edge" ? [setting.public.host] : [], "https");
    hostsCache = { key, hosts };
  }
  return hostsCache.hosts;
}

/** Refuses a request whose Host is not this gateway (checked before anything else is read). */
export function checkHost(headers: Headers, hosts: Set<string>): void {
  const host = headers.get("host")?.toLowerCase() ?? "";
  // A comma means the header arrived twice; two copies never vouch for each other.
  if (!hosts.has(host)) throw new GatewayError("host_not_allowed");
}

/**
 * Refuses a write from another Origin, and any API request (the gateway's or an app
 * backend's) a browser says came from another site: a cross-site page can still make the
 * owner's browser navigate to a GET (the Lax cookie rides along), and some GETs mint or
 * change things. It reads the one parsed path and Authorization the router and the
 * credential reader read, so an encoding cannot route a request past it.
 */
export function checkOrigin(
  headers: Headers,
  method: string,
  hosts: GatewayHosts,
  parsed: Pick<ParsedRequest, "path" | "authorization">,
): void {
  const site = headers.get("sec-fetch-site");
  const origin = headers.get("origin");
  const appBackendPath = isAppBackendPath(parsed.path);
  // An app's UI runs sandboxed in an opaque origin ("null"): its calls to its own backend
  // are cross-site and carry no cookie, only the app token it was handed. Held to the app's
  // permissions, such a call (and its credential-less CORS preflight) is let through; nothing
  // else from another site is.
  if (appBackendPath && origin === "null" && (method === "OPTIONS" || parsed.authorization.kind === "bearer")) return;
  // The same page's socket: the events route itself admits an opaque origin only for an app token alone.
  if (parsed.path === "/api/ws" && origin === "null" && parsed.authorization.kind === "bearer") return;
  const isApi = isGatewayApiPath(parsed.path) || appBackendPath;
  if (isApi && site !== null && site !== "same-origin" && site !== "none") throw new GatewayError("origin_not_allowed");
  if (!STATE_CHANGING.has(method)) return;
  if (origin !== null && !isOwnOrigin(origin, hosts)) throw new GatewayError("origin_not_allowed");
  if (origin === null && site !== null && site !== "same-origin" && site !== "none")
    throw new GatewayError("origin_not_allowed");
}

/** True when `origin` is this gateway's own: its scheme (http locally, https at the edge) and a Host it answers to. */
export function isOwnOrigin(origin: string, hosts: GatewayHosts): boolean {
  const match = /^(https?):\/\/([^/,\s]+)$/i.exec(origin.trim());
  return match !== null && match[1].toLowerCase() === hosts.scheme && hosts.has(match[2].toLowerCase());
}
