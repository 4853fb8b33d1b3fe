// The reverse proxy (PROXY-01..12): `/apps/<name>/api/<tail>` reaches the app's backend on
// loopback at `/api/<tail>` with the query exactly as sent, carrying the app's own token and
// a signature over exactly the target and body the backend receives. Nothing is ever sent
// unsigned: an app without a current secret has no healthy backend.
import { GatewayError } from "../../kernel/contracts/errors";
import type { Env } from "../../durable/env";
import type { ProxyTarget } from "../../kernel/contracts/app-record";
import { slotBinding } from "../../kernel/contracts/backend-slots";
import { appNotFound, proxyTargetOf } from "../app-registry";
import { sessions } from "../sessions";
import { readCappedBody } from "../read-input";
import type { Principal } from "../guards/principal";
import { NO_BODY, sendSigned, type BackendTransport } from "./signed-send";
import { isAmbiguousPath } from "./app-target";
import { isAppBackendPath } from "../guards/request-path";
import { inertAnswer, keptLocation } from "./backend-answer-headers";
import { enterSelfCall, releasedWhenDone, type SelfCallSlot } from "./self-call-bound";
import { linkBackendTransport } from "./link-relay";
import { publicOriginOf } from "../guards/public-origin";

export const PROXY_BODY_LIMIT = 16 * 1024 * 1024;
// A GET or HEAD carries no body: its signed bytes are this one empty view, never written.
const EMPTY_BODY = new Uint8Array(0);

/** True when the caller is the app itself with its token alone: a call its backend (or its sandboxed UI) makes through its own proxy. */
function isSelfCall(principal: Principal, app: string): boolean {
  return principal.kind === "app" && principal.narrows === null && principal.app === app;
}

/**
 * How a backend is reached: a confined one through its socket slot's service binding (it has
 * no port on the host's loopback), an unconfined one (sandbox.mode "off") on its loopback port;
 * at the edge, either one over the paired machine's link, where the bridge finds it by name.
 */
export function backendTransport(
  env: Env,
  app: string,
  target: Pick<ProxyTarget, "slot" | "port">,
): BackendTransport | null {
  if (publicOriginOf(env).mode === "edge")
    return target.slot !== null || target.port !== null ? linkBackendTransport(env, app) : null;
  if (target.slot !== null) {
    const binding = env[slotBinding(target.slot)];
    if (!binding) return null;
    return { origin: "http://app-backend", fetch: (url, init) => binding.fetch(url, init) };
  }
  if (target.port !== null)
    return { origin: `http://127.0.0.1:${target.port}`, fetch: (url, init) => fetch(url, init) };
  return null;
}

/**
 * Forwards one request to the app's backend (signed-send.ts) and streams its answer back, made
 * inert on the gateway's origin (backend-answer-headers.ts). A redirect that leaves
 * `/apps/<app>/` becomes 502 `app_redirect_refused`; an app's own calls through its proxy are
 * bounded (self-call-bound.ts).
 */
export async function forwardToBackend(
  env: Env,
  request: Request,
  url: URL,
  app: string,
  principal: Principal,
  now: number,
): Promise<Response> {
  if (isAmbiguousPath(url.pathname)) throw new GatewayError("proxy_path_ambiguous");
  const prefix = `/apps/${app}`;
  const tail = url.pathname.slice(prefix.length);
  if (!url.pathname.startsWith(`${prefix}/`) || !isAppBackendPath(url.pathname))
    throw new GatewayError("proxy_path_ambiguous");

  const target = await proxyTargetOf(env, app);
  if (!target) throw appNotFound(app);
  if (!target.enabled) throw new GatewayError("app_disabled", { vars: { name: app } });
  const transport = backendTransport(env, app, target);
  if (!target.healthy || transport === null || !target.secret)
    throw new GatewayError("app_backend_unavailable", { vars: { name: app } });

  // Read once, capped, then hashed and forwarded: the signed bytes are the sent bytes.
  const body = NO_BODY.has(request.method) ? EMPTY_BODY : await readCappedBody(request, PROXY_BODY_LIMIT);
  const backendUrl = new URL(`${transport.origin}${tail}${url.search}`);
  const token = await sessions(env).appToken(app, target.tokenEpoch, now);
  const slot: SelfCallSlot | null = isSelfCall(principal, app) ? enterSelfCall(app, now) : null;
  let answer: Response;
  try {
    answer = await sendSigned(
      transport,
      request,
      backendUrl,
      body,
      { app, secret: target.secret, token, hop: slot?.depth ?? 0, responseTimeoutMs: target.responseTimeoutMs },
      now,
    );
  } catch (error) {
    slot?.release();
    throw error;
  }
  const backendLocation = answer.headers.get("location");
  const location = backendLocation === null ? null : keptLocation(backendLocation, url, app);
  if (backendLocation !== null && location === null && answer.status >= 300 && answer.status < 400) {
    await answer.body?.cancel();
    slot?.release();
    throw new GatewayError("app_redirect_refused", { vars: { name: app } });
  }
  const bodyBack = slot ? releasedWhenDone(answer.body, slot.release) : answer.body;
  return inertAnswer(answer, location, request.headers.get("origin"), bodyBack);
}
