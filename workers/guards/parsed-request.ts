// One parsed request, read once by the first step. The host/origin guard, the router's
// authorization step, the credential reader and the proxy all take this one value, so no two
// of them can read a different path, Authorization header or session cookie.
import { GatewayError } from "../contracts/errors";
import {
  parseAuthorization,
  sessionCookieOf,
  subprotocolBearer,
  type ParsedAuthorization,
  type PresentedCredentials,
} from "./credentials";
import { pathAmbiguity, rawPathOf } from "./request-path";

export interface ParsedRequest {
  url: URL;
  /** The path as sent, proven to read the same to every parser (request-path.ts). */
  path: string;
  authorization: ParsedAuthorization;
  /** The session cookie's one value, or null. */
  sessionCookie: string | null;
}

/**
 * Parses `request` or refuses it before routing: 400 `request_path_ambiguous`, 400
 * `auth_header_malformed`, 403 `auth_cookie_conflict`.
 */
export function parseRequest(request: Request, port: string): ParsedRequest {
  const url = new URL(request.url);
  const path = rawPathOf(request.url);
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
  return { url, path, authorization, sessionCookie: cookie.kind === "one" ? cookie.value : null };
}

/** The credentials a parsed request presents; none of the values is ever logged or echoed. */
export function presentedCredentials(parsed: ParsedRequest): PresentedCredentials {
  // Most requests have no query: no URLSearchParams is made for them.
  const query = parsed.url.search === "" ? null : parsed.url.searchParams;
  return {
    cookie: parsed.sessionCookie,
    bearer: parsed.authorization.kind === "bearer" ? parsed.authorization.token : null,
    link: query?.get("token") ?? null,
    appToken: query?.get("app_token") ?? null,
  };
}
