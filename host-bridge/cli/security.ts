// `personalclaw security events` and `personalclaw security verify`.
import { parseArgs } from "node:util";
import { callGateway } from "./gateway-client";
import { safeLine } from "../../workers/contracts/text-safety";
import { printRefusal } from "./print";
import { clearUnacknowledgedAnchor, readUnacknowledgedAnchor } from "../sel-anchor";

export async function runSecurityEvents(args: string[], home: string): Promise<number> {
  const { values } = parseArgs({ args, options: { kind: { type: "string" }, limit: { type: "string" }, json: { type: "boolean" } } });
  const query = new URLSearchParams();
  if (values.kind) query.set("kind", values.kind);
  if (values.limit) query.set("limit", values.limit);
  const answer = await callGateway(home, "security-events", "GET", `/api/security/events${query.size ? `?${query}` : ""}`);
  if (answer.status !== 200) return printRefusal(answer, Boolean(values.json));
  if (values.json) {
    process.stdout.write(`${JSON.stringify(answer.body)}\n`);
    return 0;
  }
  for (const event of answer.body.events) {
    // Stored subjects are already one escaped line; escaping again is harmless and keeps a row from an older log safe.
    process.stdout.write(`${event.seq}\t${event.ts}\t${event.kind}\t${event.principal}\t${event.outcome}\t${safeLine(event.subject)}\n`);
  }
  return 0;
}

export async function runSecurityVerify(args: string[], home: string): Promise<number> {
  const { values } = parseArgs({ args, options: { json: { type: "boolean" } } });
  const answer = await callGateway(home, "security-verify", "GET", "/api/security/events/verify");
  if (answer.status !== 200) return printRefusal(answer, Boolean(values.json));
  const result = answer.body;
  if (values.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else if (result.ok) process.stdout.write(`The security log verifies: ${result.checked} rows in ${result.segments} segments.\n`);
  else process.stdout.write(`The security log does NOT verify: first bad row ${result.first_bad_seq} (${result.reason}); ${result.checked} rows checked.\n`);
  return result.ok ? 0 : 1;
}

/**
 * `personalclaw security acknowledge`: the owner says they know the anchor was lost. The row is
 * written first (so the acknowledgement is itself evidence), then doctor stops failing.
 */
export async function runSecurityAcknowledge(home: string): Promise<number> {
  const lost = readUnacknowledgedAnchor(home);
  if (lost === null) {
    process.stdout.write("Nothing to acknowledge: the security-log anchor has not been lost.\n");
    return 0;
  }
  const answer = await callGateway(home, "security-acknowledge", "POST", "/api/internal/sel/append", {
    kind: "sel_anchor_loss_acknowledged",
    principal: "cli",
    outcome: "info",
    subject: "",
    detail: { since: lost.since, reason: lost.reason },
  });
  if (answer.status !== 200) return printRefusal(answer, false);
  clearUnacknowledgedAnchor(home);
  process.stdout.write(`Acknowledged: the security-log anchor was ${lost.reason} at ${lost.since}; truncation before then cannot be detected. The anchor now follows the log again.\n`);
  return 0;
}
