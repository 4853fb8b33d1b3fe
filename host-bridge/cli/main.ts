// The personalclaw command line: parses argv against the command table and runs the row's
// handler. Every way a run can go wrong ends here as one sentence (or one JSON envelope under
// --json) and an exit status; a stack trace only under PERSONALCLAW_DEBUG=1.
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { GatewayError } from "../../kernel/contracts/errors";
import { storageFullReason } from "../../kernel/contracts/storage-full";
import { safeLine, safeLines } from "../../kernel/text/text-safety";
import { homePaths } from "../home";
import { readSettings, type Settings } from "../settings";
import type { FlagSpec, FlagValues } from "./command-table";
import { COMMANDS } from "./commands";
import { GatewayNotRunning } from "./gateway-client";
import { commandHelp, groupHelp, topHelp } from "./help-text";
import { describeInvocation, programName, recordInvocation } from "./invocation";
import { parseCommandLine, type ParsedCommandLine } from "./parse-command-line";
import { runVersion } from "./status";
import { EXIT_USAGE, UsageError } from "./usage-error";
import { EXIT_FAILED } from "./print";

function printHelp(words: readonly string[]): number {
  const program = programName();
  if (words.length === 0) process.stdout.write(topHelp(program, COMMANDS));
  else {
    const row = COMMANDS.find((spec) => spec.words.join(" ") === words.join(" "));
    process.stdout.write(row ? commandHelp(program, row) : groupHelp(program, COMMANDS, words[0]));
  }
  return 0;
}

/** Prints one of the CLI's own errors (a command line, a bug): the sentence on stderr, or its envelope on stdout when --json was asked. */
function printCliError(code: string, message: string, json: boolean): void {
  if (json) process.stdout.write(`${JSON.stringify({ error: { code, message } })}\n`);
  else process.stderr.write(`personalclaw: ${safeLine(message)}\n`);
}

function printUsageError(error: UsageError, json: boolean): number {
  const help = [programName(), ...error.words, "--help"].join(" ");
  const message = new GatewayError("cli_usage", { vars: { problem: error.message, help } }).message;
  printCliError("cli_usage", message, json);
  return EXIT_USAGE;
}

/**
 * An error no handler expected: one sentence. Its stack goes to <home>/logs/cli-errors.log
 * when the home exists (a bug report needs it; the terminal does not).
 */
function printInternalError(error: unknown, command: string, home: string, json: boolean): number {
  const reason = error instanceof Error ? error.message.split("\n")[0] : String(error);
  const paths = homePaths(home);
  let details = "run it again with PERSONALCLAW_DEBUG=1 to see the details";
  if (existsSync(paths.logs)) {
    const file = join(paths.logs, "cli-errors.log");
    try {
      // Under the gateway log's own rule: an error can quote an answer, and the file never holds the home's secret.
      const secret = existsSync(paths.localSecret) ? [readFileSync(paths.localSecret, "utf8").trim()] : [];
      const stack = error instanceof Error ? (error.stack ?? error.message) : String(error);
      appendFileSync(file, `${new Date().toISOString()} ${command}: ${safeLines(stack, secret)}\n`, { mode: 0o600 });
      details = `the details are in ${file}`;
    } catch {
      // The sentence still tells how to see them.
    }
  }
  printCliError(
    "cli_internal_error",
    new GatewayError("cli_internal_error", { vars: { command, reason, details } }).message,
    json,
  );
  return EXIT_FAILED;
}

/** Runs the CLI; returns the process exit status. */
export async function main(argv: string[], script: string = process.argv[1] ?? "personalclaw"): Promise<number> {
  const settings: Settings = readSettings();
  const json = argv.includes("--json");
  let parsed: ParsedCommandLine;
  try {
    parsed = parseCommandLine(COMMANDS, argv);
  } catch (error) {
    recordInvocation(describeInvocation({ ...invocationFacts(settings, script), home: settings.home }));
    if (error instanceof UsageError) return printUsageError(error, json);
    throw error;
  }
  const home = parsed.kind === "run" && parsed.home !== undefined ? resolve(parsed.home) : settings.home;
  recordInvocation(describeInvocation({ ...invocationFacts(settings, script), home }));
  if (parsed.kind === "help") return printHelp(parsed.words);
  if (parsed.kind === "version") return runVersion({});
  const command = parsed.spec.words.join(" ");
  try {
    // The parser checked every value against the row that declares it.
    return await parsed.spec.run(
      { flags: parsed.flags as FlagValues<Record<string, FlagSpec>>, args: parsed.args },
      { home, settings: { ...settings, home } },
    );
  } catch (error) {
    if (error instanceof UsageError) return printUsageError(error, json);
    if (error instanceof GatewayNotRunning) {
      printCliError(error.code, error.message, json);
      return EXIT_FAILED;
    }
    const full = storageFullReason(error);
    if (full !== null) {
      printCliError("storage_full", `the disk holding ${home} is full (${full}); free some space and try again.`, json);
      return EXIT_FAILED;
    }
    if (settings.debug) throw error;
    return printInternalError(error, command, home, json);
  }
}

function invocationFacts(settings: Settings, script: string) {
  return {
    script,
    npmCommand: settings.npmCommand,
    npmLifecycleEvent: settings.npmLifecycleEvent,
    path: settings.path,
  };
}
