// The one door platform events leave through (EVT-01, WS-02): a handler names a classified
// event (the type admits only names in kernel/rules/event-names.ts) and its identifiers; the
// EventHub fans it out through its one filter and into subscribed apps' inboxes.
import type { Env } from "../env";
import type { EventData, EventName } from "../../kernel/rules/event-names";
import { eventHub, securityLog } from "../instances";

/** Keeps only identifier-like scalars (EVT-03): a string over 200 characters is prose, not an id, and is dropped. */
export function identifiersOnly(data: Record<string, unknown>): EventData {
  const out: EventData = {};
  for (const [key, value] of Object.entries(data)) {
    if (typeof value === "number" || typeof value === "boolean" || value === null) out[key] = value;
    else if (typeof value === "string" && value.length <= 200) out[key] = value;
  }
  return out;
}

/**
 * Publishes one event. A live event is advisory — the state it announces is already written —
 * so a hub that cannot be reached never fails the request; the event it lost is a
 * security-log row (EVT-05), not swallowed, and only a line when the log cannot be reached either.
 */
export async function emitEvent(env: Env, type: EventName, data: Record<string, unknown>): Promise<void> {
  try {
    await eventHub(env).publish({ type, data: identifiersOnly(data) });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    try {
      // Written without announcing it: the announcement is itself an event through the hub that failed.
      await securityLog(env).append({
        kind: "event_not_published",
        outcome: "error",
        principal: "gateway",
        subject: type,
        detail: { reason: reason.slice(0, 500) },
      });
    } catch {
      console.error("event_not_published", type, reason);
    }
  }
}

/** Closes every socket an app holds, at once (disable, uninstall). */
export async function closeAppSockets(env: Env, app: string): Promise<void> {
  try {
    await eventHub(env).revokeApp(app);
  } catch (error) {
    console.error("event_sockets_not_closed", app, error instanceof Error ? error.message : String(error));
  }
}
