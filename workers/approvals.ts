// The worker's door to ApprovalStore: the one instance of this gateway.
import type { Env } from "./env";

/** The one ApprovalStore instance of this gateway. */
export function approvalStore(env: Env) {
  return env.APPROVALS.get(env.APPROVALS.idFromName("approvals"));
}
