// How CLI commands report a gateway refusal (the sentence on stderr, or the envelope as JSON)
// and print rows of app data: every field an app or a gateway answer controls goes through the
// one text-safety module, so a version or a name cannot rewrite the line it is on.
import { safeLine } from "../../kernel/text/text-safety";
import type { GatewayAnswer } from "./gateway-client";

/**
 * The exit status of every command that did not do what it was asked, whether the gateway
 * refused it (the error's stable code says why) or it failed; a command line the CLI cannot read
 * exits EXIT_USAGE (2).
 */
export const EXIT_FAILED = 1;

/** An error as a command reports it: the gateway's code and sentence, and the file or package it names. */
export interface CliError {
  code: string;
  message: string;
  path?: string;
}

/**
 * Prints one error: its sentence, code and path on stderr, each through safeLine (a message or
 * path can quote a bundle or a child's output), or with --json `{"error": ...}` on stdout (the
 * gateway's whole answer when given: a refusal can carry more, a review say). Answers EXIT_FAILED.
 */
export function printError(error: CliError, json: boolean, answerBody?: unknown): number {
  if (json) process.stdout.write(`${JSON.stringify(answerBody ?? { error })}\n`);
  else
    process.stderr.write(
      `personalclaw: ${safeLine(error.message)} (${safeLine(error.code)}${error.path ? `, ${safeLine(error.path)}` : ""})\n`,
    );
  return EXIT_FAILED;
}

/** Prints an answer that is not a success (a refusal, or one the CLI cannot read); answers EXIT_FAILED. */
export function printRefusal(answer: GatewayAnswer, json: boolean): number {
  const error = answer.body?.error;
  if (!error) return printError({ code: "unexpected_answer", message: `The gateway answered ${answer.status}.` }, json);
  return printError({ code: String(error.code), message: String(error.message) }, json, answer.body);
}

/** One tab-separated row of a listing: every field through safeLine, a missing one as "-". */
export function safeRow(fields: readonly unknown[]): string {
  return `${fields.map((field) => safeLine(field === null || field === undefined ? "-" : String(field))).join("\t")}\n`;
}
