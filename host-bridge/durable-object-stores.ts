// The gateway's Durable Object namespaces: the binding the worker reads, the class that serves
// it, and the uniqueKey that names its storage folder under <home>/state. The workerd config,
// the state manifest and every reader of a store's files take the names from here.
import { join } from "node:path";

export const DURABLE_OBJECT_CLASSES = [
  { binding: "SESSIONS", className: "SessionStore", uniqueKey: "personalclaw-session-store" },
  { binding: "APPS", className: "AppRegistry", uniqueKey: "personalclaw-app-registry" },
  { binding: "SECURITY_LOG", className: "SecurityLog", uniqueKey: "personalclaw-security-log" },
  { binding: "APPROVALS", className: "ApprovalStore", uniqueKey: "personalclaw-approval-store" },
  { binding: "EVENTS", className: "EventHub", uniqueKey: "personalclaw-event-hub" },
  // Edge mode only (a paired machine's link); a local start never creates one.
  { binding: "BRIDGE_LINKS", className: "BridgeLink", uniqueKey: "personalclaw-bridge-link" },
] as const;

/** The folder under `stateDir` where workerd keeps the storage of `className`'s objects. */
export function storeFolder(stateDir: string, className: (typeof DURABLE_OBJECT_CLASSES)[number]["className"]): string {
  return join(stateDir, DURABLE_OBJECT_CLASSES.find((d) => d.className === className)!.uniqueKey);
}
