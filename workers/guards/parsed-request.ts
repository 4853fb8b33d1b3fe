// One parsed request, read once by the first step. The host/origin guard, the router's
// authorization step, the credential reader and the proxy all take this one value, so no two
// of them can read a different path, Authorization header or session cookie.
import { GatewayError } from "../../kernel/contracts/errors";
import {
  parseAuthorization,
  sessionCookieOf,
  subprotocolBearer,
  type ParsedAuthorization,
  type PresentedCredentials,
} from "./credentials";
import { hasQuery, pathAmbiguity, rawPathOf } from "./request-path";

export interface ParsedRequest {
  /** The WHATWG reading of the request's URL, made on first use (most requests never need it). */
  readonly url: URL;
  /** The path as sent, proven to read the same to every parser (request-path.ts). */
  path: string;
  /** True when the URL carries a non-empty query; false means `url.search` is "". */
  hasQuery: boolean;
  authorization: ParsedAuthorization;
  /** The session cookie's one value, or null. */
  sessionCookie: string | null;
}

/**
 * Parses `request` or refuses it before routing: 400 `request_path_ambiguous`, 400
 * `auth_header_malformed`, 403 `auth_cookie_conflict`.
 */
export function parseRequest(request: Request, port: string): ParsedRequest {
  const raw = request.url;
  const path = rawPathOf(raw);
  const ambiguity = pathAmbiguity(path);
  if (ambiguity !== null) throw new GatewayError("request_path_ambiguous", { vars: { reason: ambiguity } });
  let authorization = parseAuthorization(request.headers.get("authorization"));
  if (authorization.kind === "none" && path === "/api/ws")
    authorization = subprotocolBearer(request.headers.get("sec-websocket-protocol"));
  const cookie = sessionCookieOf(request.headers.get("cookie"), port);
  if (cookie.kind === "conflict") {
    throw new GatewayError("auth_cookie_conflict", {
      vars: { count: cookie.count },
      detail: { copies: cookie.count },
      headers: { "X-Auth-Required": "true" },
    });
  }
  let url: URL | null = null;
  return {
    get url() {
      return (url ??= new URL(raw));
    },
    path,
    hasQuery: hasQuery(raw),
    authorization,
    sessionCookie: cookie.kind === "one" ? cookie.value : null,
  };
}

/** The credentials a parsed request presents; none of the values is ever logged or echoed. */
export function presentedCredentials(parsed: ParsedRequest): PresentedCredentials {
  // Most requests have no query: no URL or URLSearchParams is made for them.
  const query = parsed.hasQuery ? parsed.url.searchParams : null;
  return {
    cookie: parsed.sessionCookie,
    bearer: parsed.authorization.kind === "bearer" ? parsed.authorization.token : null,
    link: query?.get("token") ?? null,
    appToken: query?.get("app_token") ?? null,
  };
}
