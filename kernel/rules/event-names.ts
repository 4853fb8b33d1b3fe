// The classification of every event name the platform emits (WS-02/03/05, EVT-01). The hub's
// one filter reads it; a name missing here is denied to every socket and every inbox, and a
// test fails when code emits a name this table lacks (durable/event-hub/emitted-names.test.ts).
//
// - `always`: delivered to every socket, app sockets included (carries nothing about anyone).
// - `owner`: only owner sockets. An app never declares one; an app gets an approval frame
//   only for an approval it raised itself (`toAsker`).
// - `declarable`: owner sockets, and an app socket whose `permissions.events` named it both
//   at connect time and now.
export const EVENT_CLASSES = {
  "hub.hello": { tier: "always", data: "the socket's own scope: principal and the events it will get" },
  "app.installed": { tier: "declarable", data: "app" },
  "app.updated": { tier: "declarable", data: "app, version" },
  "app.enabled": { tier: "declarable", data: "app" },
  "app.disabled": { tier: "declarable", data: "app" },
  "app.uninstalled": { tier: "declarable", data: "app" },
  "backend.health_changed": { tier: "declarable", data: "app, running, healthy" },
  "install.progress": { tier: "declarable", data: "install_id, op, step, status" },
  "approval.raised": { tier: "owner", toAsker: true, data: "id, asked_by, kind" },
  "approval.answered": { tier: "owner", toAsker: true, data: "id, asked_by, kind, decision" },
  "security_log.appended": { tier: "owner", data: "seq (the newest row's number; counts only)" },
  "session.signed_in": { tier: "owner", data: "session id" },
  "session.signed_out": { tier: "owner", data: "session id, reason" },
  "session.renamed": { tier: "owner", data: "session id" },
  "config.changed": { tier: "owner", data: "field" },
  "mcp.tool_called": { tier: "owner", data: "app, server, tool, outcome" },
} as const satisfies Record<string, { tier: "always" | "owner" | "declarable"; toAsker?: true; data: string }>;

/** A classified name: the only kind `emitEvent` accepts. */
export type EventName = keyof typeof EVENT_CLASSES;
/** Who a name reaches: every socket, the owner's only, or apps that declared it. */
export type EventTier = (typeof EVENT_CLASSES)[EventName]["tier"];

/** Identifier-only payloads (EVT-03): names, ids, numbers and booleans, never prose. */
export type EventData = Record<string, string | number | boolean | null>;

/** One frame on a socket: the envelope is always `{type, data}` (WS-14). */
export interface EventFrame {
  type: string;
  data: EventData;
}

/** The class of a name, or null when the table does not list it (denied everywhere). */
export function classOf(name: string): { tier: EventTier; toAsker: boolean } | null {
  if (!Object.prototype.hasOwnProperty.call(EVENT_CLASSES, name)) return null;
  const entry = EVENT_CLASSES[name as EventName] as { tier: EventTier; toAsker?: true };
  return { tier: entry.tier, toAsker: entry.toAsker === true };
}

/** Names an app may declare in `permissions.events` or `eventSubscriptions`. */
export function isAppDeclarable(name: string): boolean {
  return classOf(name)?.tier === "declarable";
}

/** The subprotocol a client names to speak the hub's frames; the server answers with it. */
export const EVENTS_SUBPROTOCOL = "personalclaw.events.v1";
/**
 * A browser's WebSocket cannot set Authorization, so a page without the owner's cookie (an app
 * UI in its opaque origin) offers its token as a second subprotocol `personalclaw.bearer.<token>`:
 * never in the URL, which logs and histories keep. The server never echoes it.
 */
export const BEARER_SUBPROTOCOL_PREFIX = "personalclaw.bearer.";

/** Close codes the hub uses (4000-4999 is the application range). */
export const HUB_CLOSE = { revoked: 4403 } as const;
