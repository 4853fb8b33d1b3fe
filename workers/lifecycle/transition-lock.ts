// One transition of an app at a time (LIFE-01): every change of an installed app runs under the
// lock AppRegistry hands out for it, so a second change meanwhile is refused and changes
// nothing. A lock is released when its transition ends, when it lapses, or when the bridge has
// settled a transition whose request went away.
import { appRegistry } from "../../durable/instances";
import { GatewayError } from "../../kernel/contracts/errors";
import type { RouteRequest } from "../route-row";

// A transition lock lapses after this long in case the request holding it vanished (the
// longest transition, an install, may take 15 minutes of package downloads).
const TRANSITION_TTL_MS = 20 * 60 * 1000;

/**
 * Runs one transition of an app under its lock (LIFE-01): a second transition meanwhile is
 * refused with 409 app_busy (retryable) and changes nothing.
 */
export async function withTransition<T>(
  req: RouteRequest<unknown, unknown>,
  name: string,
  kind: string,
  work: () => Promise<T>,
): Promise<T> {
  const registry = appRegistry(req.env);
  const lock = await registry.beginTransition(name, kind, req.now, TRANSITION_TTL_MS);
  if (!lock.ok)
    throw new GatewayError("app_busy", {
      vars: { name: name.slice(0, 80), kind: lock.kind },
      detail: { retryable: true, kind: lock.kind },
      headers: { "Retry-After": "1" },
    });
  try {
    return await work();
  } finally {
    await registry.endTransition(name, lock.token);
  }
}

/**
 * Releases the locks taken before `takenBefore` of one app (or, with `name` null, of every app)
 * once the bridge has settled their transitions, so none answers app_busy until its lock would
 * lapse; a lock taken since is left alone. A release is one security-log row.
 */
export async function releaseAbandonedTransitions(
  req: RouteRequest<unknown, unknown>,
  name: string | null,
  takenBefore: number,
): Promise<{ released: number }> {
  const released = await appRegistry(req.env).releaseTransitionsTakenBefore(name, takenBefore, TRANSITION_TTL_MS);
  if (released.length > 0)
    await req.audit({
      kind: "app_transition_recovered",
      outcome: "info",
      subject: name ?? "*",
      detail: { op: "lock_released", apps: released },
    });
  return { released: released.length };
}
