// How CLI commands report a gateway refusal: the sentence on stderr, or the envelope as JSON.
import { safeLine } from "../../workers/contracts/text-safety";
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
