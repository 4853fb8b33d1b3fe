// The one instance of each Durable Object this gateway holds, named once: the worker and the
// objects themselves (an approval's audit row, the event hub's lookups) address them here.
import type { Env } from "./env";

/** The one SessionStore: sessions, sign-in links, the signing key. */
export function sessionStore(env: Env) {
  return env.SESSIONS.get(env.SESSIONS.idFromName("sessions"));
}

/** The one AppRegistry: installed-app records. */
export function appRegistry(env: Env) {
  return env.APPS.get(env.APPS.idFromName("apps"));
}

/** The one SecurityLog: the HMAC-chained log. */
export function securityLog(env: Env) {
  return env.SECURITY_LOG.get(env.SECURITY_LOG.idFromName("security-log"));
}

/** The one ApprovalStore: approvals and the grants scoped answers leave. */
export function approvalStore(env: Env) {
  return env.APPROVALS.get(env.APPROVALS.idFromName("approvals"));
}

/** The one EventHub: live-event sockets and their scopes. */
export function eventHub(env: Env) {
  return env.EVENTS.get(env.EVENTS.idFromName("events"));
}

/** The BridgeLink that keeps the paired machines and their keys (edge mode). */
export function bridgeLinkPairing(env: Env) {
  return env.BRIDGE_LINKS.get(env.BRIDGE_LINKS.idFromName("pairing"));
}

/** The BridgeLink holding the link to paired `machine`'s bridge (edge mode). */
export function bridgeLinkOf(env: Env, machine: string) {
  return env.BRIDGE_LINKS.get(env.BRIDGE_LINKS.idFromName(`machine:${machine}`));
}
