// `personalclaw security events` and `personalclaw security verify`.
import { parseArgs } from "node:util";
import { callGateway } from "./gateway-client";
import { safeLine } from "../../workers/contracts/text-safety";
import { printRefusal } from "./print";

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
