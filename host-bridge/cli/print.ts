// How CLI commands report a gateway refusal (the sentence on stderr, or the envelope as JSON)
// and print rows of app data: every field an app or a gateway answer controls goes through the
// one text-safety module, so a version or a name cannot rewrite the line it is on.
import { safeLine } from "../../kernel/text/text-safety";
import type { GatewayAnswer } from "./gateway-client";

/** Prints a failed answer; returns the exit status for it. */
export function printRefusal(answer: GatewayAnswer, json: boolean): number {
  const envelope = answer.body?.error
    ? answer.body
    : { error: { code: "unexpected_answer", message: `The gateway answered ${answer.status}.` } };
  if (json) process.stdout.write(`${JSON.stringify(envelope)}\n`);
  else process.stderr.write(`personalclaw: ${safeLine(envelope.error.message)} (${safeLine(envelope.error.code)})\n`);
  return 1;
}

/** One tab-separated row of a listing: every field through safeLine, a missing one as "-". */
export function safeRow(fields: readonly unknown[]): string {
  return `${fields.map((field) => safeLine(field === null || field === undefined ? "-" : String(field))).join("\t")}\n`;
}
