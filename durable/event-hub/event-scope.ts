// The one per-socket filter every frame passes (WS-02/07/08/14). Pure: given what a socket
// was granted when it connected, what its app declares now, and the frame, whether to send it.
import { classOf, isAppDeclarable, type EventFrame } from "../../kernel/rules/event-names";

/** The header the worker hands a socket's connect-time scope in (the worker builds that request; no client reaches the hub). */
export const HUB_SCOPE_HEADER = "x-personalclaw-hub-scope";
/** "1" when the client offered the events subprotocol, so the answer must name it. */
export const HUB_PROTOCOL_HEADER = "x-personalclaw-hub-protocol";

/** Live sockets one app may hold at once (a page or two and a backend need a handful). */
export const MAX_SOCKETS_PER_APP = 16;

/** What a socket recorded at connect time (its WebSocket attachment). */
export interface SocketScope {
  /** `owner` or `app:<name>`. */
  principal: string;
  /** The app of an app socket, null for the owner. */
  app: string | null;
  /** The app's `permissions.events` at connect time that the table lets an app declare. */
  granted: string[];
  /** The owner session the socket rides on (its sign-out closes the socket); null for an app or auth-off. */
  session: string | null;
}

/** What an app declares now: null when no such app is installed (it declares nothing). */
export interface CurrentDeclaration {
  enabled: boolean;
  events: string[];
}

export type FrameVerdict =
  | { deliver: true }
  | { deliver: false; reason: "unclassified" | "owner_only" | "not_declared" | "narrowed" | "revoked" };

const DELIVER: FrameVerdict = { deliver: true };
const deny = (reason: Exclude<FrameVerdict, { deliver: true }>["reason"]): FrameVerdict => ({ deliver: false, reason });

/**
 * The scope decision. An unclassified name is denied to everyone, owner included. An app socket
 * gets `always` frames; a disabled or removed app (positive evidence only) collapses to those;
 * an owner-only frame reaches an app only when it is about the app's own approval; a declarable
 * frame needs the name in the connect-time grant AND in the current declaration, so an open
 * socket's scope can only shrink.
 */
export function frameVerdict(scope: SocketScope, current: CurrentDeclaration | null, frame: EventFrame): FrameVerdict {
  const eventClass = classOf(frame.type);
  if (eventClass === null) return deny("unclassified");
  if (scope.app === null) return DELIVER;
  if (eventClass.tier === "always") return DELIVER;
  if (current === null || !current.enabled) return deny("revoked");
  if (eventClass.tier === "owner")
    return eventClass.toAsker && frame.data.asked_by === `app:${scope.app}` ? DELIVER : deny("owner_only");
  if (!scope.granted.includes(frame.type)) return deny("not_declared");
  if (!current.events.includes(frame.type)) return deny("narrowed");
  return DELIVER;
}

/** Splits an app's declared `permissions.events` into what the table lets it have and why the rest is refused. */
export function connectGrant(declared: readonly string[]): {
  granted: string[];
  refused: Array<{ event: string; reason: "unclassified" | "not_declarable" }>;
} {
  const granted: string[] = [];
  const refused: Array<{ event: string; reason: "unclassified" | "not_declarable" }> = [];
  for (const event of new Set(declared)) {
    if (isAppDeclarable(event)) granted.push(event);
    else
      refused.push({ event: event.slice(0, 80), reason: classOf(event) === null ? "unclassified" : "not_declarable" });
  }
  return { granted, refused };
}
