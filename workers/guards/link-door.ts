// The link door (edge mode): a paired machine's bridge sends its calls back over its link, and its
// BridgeLink delivers them to the worker through the LINK_DOOR service binding, which workerd
// hands to the `linkDoor` entrypoint, never through the public listener. At the edge the internal
// credential opens a route only on a request that came this way: the same header sent from the
// internet, whatever its value, is refused (internal_credential_off_link).
import type { GatewayFetch } from "./backend-door";

const cameThroughLinkDoor = new WeakSet<Request>();

/** The entrypoint the LINK_DOOR binding is wired to (exported as `linkDoor` by every build of the worker). */
export function linkDoorEntrypoint<E>(gateway: { fetch: GatewayFetch<E> }): { fetch: GatewayFetch<E> } {
  return {
    fetch(request, env, ctx) {
      cameThroughLinkDoor.add(request);
      return gateway.fetch(request, env, ctx);
    },
  };
}

/** True when a BridgeLink delivered `request`: a paired bridge's call back. */
export function isLinkDoorRequest(request: Request): boolean {
  return cameThroughLinkDoor.has(request);
}
