// The reverse proxy (PROXY-01..12): `/apps/<name>/api/<tail>` reaches the app's backend on
// loopback at `/api/<tail>` with the query exactly as sent, carrying the app's own token and
// a signature over exactly the target and body the backend receives. Nothing is ever sent
// unsigned: an app without a current secret has no healthy backend.
import { GatewayError } from "../contracts/errors";
import { PROXY_SIGNATURE_HEADER, signProxyRequest, wireTarget } from "../contracts/proxy-signature";
import type { Env } from "../env";
import { appNotFound, appRegistry } from "../app-registry";
import { sessions } from "../sessions";
import { readCappedBody } from "../routes/read-input";
import { forwardableRequestHeaders, returnableResponseHeaders } from "./forward-headers";
import { isAmbiguousPath } from "./app-target";
import { allowSandboxedUi } from "./sandboxed-ui";

export const PROXY_BODY_LIMIT = 16 * 1024 * 1024;
const NO_BODY = new Set(["GET", "HEAD"]);

/** Forwards one request to the app's backend and streams its answer back. */
export async function forwardToBackend(env: Env, request: Request, app: string, now: number): Promise<Response> {
  const url = new URL(request.url);
  if (isAmbiguousPath(url.pathname)) throw new GatewayError("proxy_path_ambiguous");
  const prefix = `/apps/${app}`;
  const tail = url.pathname.slice(prefix.length);
  if (!tail.startsWith("/api/") && tail !== "/api") throw new GatewayError("proxy_path_ambiguous");

  const target = await appRegistry(env).proxyTarget(app);
  if (!target) throw appNotFound(app);
  if (!target.enabled) throw new GatewayError("app_disabled", { vars: { name: app } });
  if (!target.healthy || target.port === null || !target.secret) throw new GatewayError("app_backend_unavailable", { vars: { name: app } });

  // Read once, capped, then hashed and forwarded: the signed bytes are the sent bytes.
  const body = NO_BODY.has(request.method) ? new Uint8Array(0) : await readCappedBody(request, PROXY_BODY_LIMIT);
  const backendUrl = new URL(`http://127.0.0.1:${target.port}${tail}${url.search}`);
  const token = await sessions(env).appToken(app, target.tokenEpoch, now);
  const headers = forwardableRequestHeaders(request.headers);
  headers.set("Authorization", `Bearer ${token}`);
  headers.set("X-PersonalClaw-App", app);
  headers.set(
    PROXY_SIGNATURE_HEADER,
    await signProxyRequest({ secret: target.secret, ts: Math.floor(now / 1000), method: request.method, target: wireTarget(backendUrl), body }),
  );
  let answer: Response;
  try {
    answer = await fetch(backendUrl, { method: request.method, headers, body: NO_BODY.has(request.method) ? undefined : body, redirect: "manual" });
  } catch {
    throw new GatewayError("app_backend_unavailable", { vars: { name: app } });
  }
  const headersBack = returnableResponseHeaders(answer.headers);
  allowSandboxedUi(request.headers.get("origin"), headersBack);
  return new Response(answer.body, { status: answer.status, statusText: answer.statusText, headers: headersBack });
}
