// Live events (WS-01..14): the one socket route and the bridge's door for install progress.
// The route decides who is connecting and what it may hear at connect time; the EventHub holds
// the socket and filters every frame (durable/event-hub).
import { eventHub } from "../../durable/instances";
import { z } from "zod";
import { GatewayError } from "../../kernel/contracts/errors";
import { EVENTS_SUBPROTOCOL } from "../../kernel/rules/event-names";
import { emitEvent } from "../../durable/event-hub/emit";
import { hostsOf, isOwnOrigin } from "../guards/host-origin";
import type { Principal } from "../guards/principal";
import { principalLabel } from "../guards/principal";
import {
  HUB_PROTOCOL_HEADER,
  HUB_SCOPE_HEADER,
  MAX_SOCKETS_PER_APP,
  type SocketScope,
} from "../../durable/event-hub/event-scope";
import { route, type RouteRequest } from "../route-row";
import { InstallProgressEventSchema } from "../../kernel/contracts/bridge-operations";

/**
 * WebSockets are not covered by CORS: a page on any site may open one to the gateway, and the
 * owner's browser would attach its cookie. So the Origin decides: none (not a browser), this
 * gateway's own, or — for an app token alone, never a cookie — an app page's opaque origin.
 */
function originRefusal(req: RouteRequest<undefined, undefined>, principal: Principal): string | null {
  const origin = req.c.req.header("origin");
  if (origin === undefined) return null;
  if (isOwnOrigin(origin, hostsOf(req.env))) return null;
  if (origin === "null" && principal.kind === "app" && principal.narrows === null) return null;
  return origin === "null" ? "opaque_origin_without_app_token" : "foreign_origin";
}

export const eventRoutes = [
  route({
    method: "GET",
    path: "/api/ws",
    family: "events",
    authz: {
      kind: "app-may",
      why: "connecting grants nothing: the hub sends an app only the events its permissions.events names (WS-01)",
    },
    internal: false,
    contract:
      "Upgrades to the live-event WebSocket for the owner (cookie or Bearer) or an app (its token as Bearer, or as the subprotocol personalclaw.bearer.<token>). Frames are {type, data}, identifiers only, each passing the socket's scope: an app hears the events its permissions.events named at connect time and still names. 426 ws_upgrade_required without Upgrade; 403 ws_origin_not_allowed from another site; a disabled app is refused before its socket is registered; an app holding 16 sockets gets 429 ws_too_many_sockets; a socket offering subprotocols without personalclaw.events.v1 gets 400 ws_subprotocol_required.",
    answer: { streamed: "101 Switching Protocols: the live-event WebSocket" },
    refuses: [
      "ws_upgrade_required",
      "ws_subprotocol_required",
      "ws_origin_not_allowed",
      "internal_only_route",
      "app_not_permitted",
      "ws_too_many_sockets",
    ],
    async handle(req) {
      if (req.c.req.header("upgrade")?.toLowerCase() !== "websocket") throw new GatewayError("ws_upgrade_required");
      const principal = req.principal;
      const refusal = originRefusal(req, principal);
      if (refusal !== null) {
        await req.audit({
          kind: "ws_origin_not_allowed",
          outcome: "refused",
          subject: "GET /api/ws",
          detail: { reason: refusal },
          group: `GET /api/ws ${refusal}`,
        });
        throw new GatewayError("ws_origin_not_allowed", { detail: { reason: refusal } });
      }
      let scope: SocketScope;
      if (principal.kind === "app") {
        // The gate refused a disabled app already (app_not_enabled); the hub checks once more, and
        // reads the declaration it snapshots, where it registers the socket.
        scope = { principal: principalLabel(principal), app: principal.app, granted: [], session: null };
      } else if (principal.kind === "owner") {
        scope = { principal: "owner", app: null, granted: [], session: principal.sessionId };
      } else {
        throw new GatewayError("internal_only_route", { vars: { method: "GET", path: "/api/ws" } });
      }
      // A client that offers subprotocols fails a 101 that selects none (a browser does), and the
      // only other one it may offer carries its token, which is never echoed: so it must offer ours.
      const protocols = req.c.req.header("sec-websocket-protocol");
      if (protocols !== undefined && !protocols.split(",").some((part) => part.trim() === EVENTS_SUBPROTOCOL))
        throw new GatewayError("ws_subprotocol_required");
      const headers = new Headers({ upgrade: "websocket", [HUB_SCOPE_HEADER]: JSON.stringify(scope) });
      if (protocols !== undefined) headers.set(HUB_PROTOCOL_HEADER, "1");
      const answer = await eventHub(req.env).fetch(new Request("http://event-hub/connect", { headers }));
      if (answer.status === 403)
        throw new GatewayError("app_not_permitted", {
          vars: { app: scope.app ?? "", path: "/api/ws" },
          detail: { reason: "app_not_enabled" },
        });
      if (answer.status === 429)
        throw new GatewayError("ws_too_many_sockets", { vars: { app: scope.app ?? "", limit: MAX_SOCKETS_PER_APP } });
      return answer;
    },
  }),
  route({
    method: "POST",
    path: "/api/internal/events/install-progress",
    family: "internal",
    authz: { kind: "internal-only" },
    internal: true,
    body: InstallProgressEventSchema,
    contract:
      "The host bridge announces one step of an install, update or uninstall the owner named with install_id (identifiers only).",
    answer: { schema: z.strictObject({ published: z.literal(true) }) },
    refuses: [],
    async handle({ env, body }) {
      await emitEvent(env, "install.progress", body);
      return { published: true };
    },
  }),
];
