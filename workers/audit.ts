// Step 7: security decisions become rows of the SecurityLog Durable Object.
import type { Env } from "./env";
import type { SecurityEventInput } from "./contracts/security-event";

export interface AuditInput {
  kind: string;
  outcome: SecurityEventInput["outcome"];
  principal?: string;
  subject?: string;
  detail?: Record<string, unknown>;
  /** Raw credential values seen in the request; masked wherever they appear, never stored. */
  secrets?: string[];
  /** For a refusal: what identical ones share (routes/refusal-group.ts); the subject when absent. */
  group?: string;
}

/** The one SecurityLog instance of this gateway. */
export function securityLog(env: Env) {
  return env.SECURITY_LOG.get(env.SECURITY_LOG.idFromName("security-log"));
}

/** Appends one row; the principal defaults to the gateway itself. */
export async function audit(env: Env, entry: AuditInput): Promise<void> {
  await securityLog(env).append({
    kind: entry.kind,
    outcome: entry.outcome,
    principal: entry.principal ?? "gateway",
    subject: entry.subject ?? "",
    detail: entry.detail ?? {},
    secrets: entry.secrets,
    group: entry.group,
  });
}
