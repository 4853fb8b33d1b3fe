// The backend door: confined app backends call the gateway back through the gateway's own UNIX
// socket (`backends` in the workerd config), which workerd delivers to the `backendDoor`
// entrypoint, never through the TCP listener. Nothing sent over that socket can claim to
// have come another way: the socket, not a header, says which way a request came.
//
// What came through the door is an app's work or nobody's, whatever the auth mode: auth
// mode `none` trusts the owner's loopback listener, and a sandbox's door is not that. So at
// the door only an app token counts; an owner credential (session cookie, owner Bearer,
// sign-in link) or the internal credential is refused, and a request without an app token is
// anonymous.
import { GatewayError } from "../../kernel/contracts/errors";
import type { ParsedRequest } from "./parsed-request";

const cameThroughDoor = new WeakSet<Request>();

/** Marks `request` as one the backends socket delivered (the door entrypoint's first act). */
export function markBackendDoor(request: Request): void {
  cameThroughDoor.add(request);
}

/** The gateway's fetch, as both entrypoints call it. */
export type GatewayFetch<E> = (request: Request, env: E, ctx: ExecutionContext) => Response | Promise<Response>;

/**
 * The entrypoint the `backends` socket is wired to (exported as `backendDoor` by every build of
 * the worker): the same gateway, each request marked as come through an app's door first.
 */
export function backendDoorEntrypoint<E>(gateway: { fetch: GatewayFetch<E> }): { fetch: GatewayFetch<E> } {
  return {
    fetch(request, env, ctx) {
      markBackendDoor(request);
      return gateway.fetch(request, env, ctx);
    },
  };
}

/** True when the backends socket delivered `request`: an app backend's call, never the owner's. */
export function isBackendDoorRequest(request: Request): boolean {
  return cameThroughDoor.has(request);
}

/** The refusal of an owner or internal credential presented through an app's door. */
export function doorCredentialRefused(carrier: string): GatewayError {
  return new GatewayError("backend_door_owner_credential", { vars: { carrier } });
}

/**
 * Refuses, at the edge, every owner or internal carrier a door request presents that needs no
 * session lookup: the session cookie, a sign-in link, the internal credential and the local
 * secret. An owner Bearer is refused where it is resolved (resolve-principal.ts).
 */
export function refuseOwnerCarriersAtDoor(request: Request, parsed: ParsedRequest): void {
  if (parsed.sessionCookie !== null) throw doorCredentialRefused("a session cookie");
  if (parsed.hasQuery && parsed.url.searchParams.has("token")) throw doorCredentialRefused("a sign-in link");
  if (request.headers.has("x-internal-secret")) throw doorCredentialRefused("the internal credential");
  if (request.headers.has("x-local-secret")) throw doorCredentialRefused("the local secret");
}
