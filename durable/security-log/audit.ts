// Step 7: security decisions become rows of the SecurityLog Durable Object.
import type { Env } from "../env";
import type { AppendResult, SecurityEventInput } from "../../kernel/contracts/security-event";
import { emitEvent } from "../event-hub/emit";
import { securityLog } from "../instances";

export interface AuditInput {
  kind: string;
  outcome: SecurityEventInput["outcome"];
  principal?: string;
  subject?: string;
  detail?: Record<string, unknown>;
  /** Raw credential values seen in the request; masked wherever they appear, never stored. */
  secrets?: string[];
  /** For a refusal: what identical ones share (refusal-group.ts); the subject when absent. */
  group?: string;
}

/** Appends one row without announcing it; the principal defaults to the gateway itself. */
export async function recordAudit(env: Env, entry: AuditInput): Promise<AppendResult> {
  return securityLog(env).append({
    kind: entry.kind,
    outcome: entry.outcome,
    principal: entry.principal ?? "gateway",
    subject: entry.subject ?? "",
    detail: entry.detail ?? {},
    secrets: entry.secrets,
    group: entry.group,
  });
}

/** Appends one row and tells the owner's sockets a row was written (its seq only; a counted repeat writes none). */
export async function audit(env: Env, entry: AuditInput): Promise<void> {
  await announceAppended(env, await recordAudit(env, entry));
}

/** The security_log.appended frame for a written row: a number, never the row. */
export async function announceAppended(env: Env, appended: AppendResult): Promise<void> {
  if (!appended.counted) await emitEvent(env, "security_log.appended", { seq: appended.seq });
}
