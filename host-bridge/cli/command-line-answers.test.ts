// What the personalclaw command answers to a command line, for every row of the command table,
// asked in-process of main() — the function bin/personalclaw.mjs runs and whose answer becomes
// the process's exit status: a line the parser refuses exits 2 with one sentence that points at
// the command's --help and carries no stack, --json turns it into the error envelope, and
// --help, -h and `help <command>` answer 0 naming every flag. Only lines the parser refuses or
// answers with help reach main() here, so no handler runs. test/cli.test.ts keeps one run through
// a real process, for the exit status and streams only a process shows.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { CommandSpec } from "./command-table";
import { COMMANDS } from "./commands";
import { main } from "./main";
import { parseCommandLine } from "./parse-command-line";
import { UsageError } from "./usage-error";

const STACK = /\n\s+at |node:internal/;
const SCRIPT = fileURLToPath(new URL("../../bin/personalclaw.mjs", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "pc-cli-lines-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// As a person runs it: not under npx or an npm script (the runner of this suite may be one).
beforeEach(() => {
  vi.stubEnv("npm_command", "");
  vi.stubEnv("npm_lifecycle_event", "");
  vi.stubEnv("PERSONALCLAW_DEBUG", "");
});
afterEach(() => vi.unstubAllEnvs());

interface Answer {
  code: number;
  stdout: string;
  stderr: string;
}

/** Collects what `stream` is given while main() runs; restored before the answer is read. */
function collect(stream: NodeJS.WriteStream): { text: () => string; restore: () => void } {
  let text = "";
  const spy = vi.spyOn(stream, "write").mockImplementation(((chunk: string | Uint8Array) => {
    text += typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
    return true;
  }) as typeof stream.write);
  return { text: () => text, restore: () => spy.mockRestore() };
}

/**
 * main()'s answer to `argv`. A line the parser would hand to a handler (or to --version, which
 * asks workerd) fails the test instead of running: this suite starts nothing.
 */
async function answer(argv: string[]): Promise<Answer> {
  let kind: string;
  try {
    kind = parseCommandLine(COMMANDS, argv).kind;
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    kind = "refused";
  }
  expect(["refused", "help"], `${argv.join(" ")} is a line the parser accepts`).toContain(kind);
  const stdout = collect(process.stdout);
  const stderr = collect(process.stderr);
  let code: number;
  try {
    code = await main(argv, SCRIPT);
  } finally {
    stdout.restore();
    stderr.restore();
  }
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** Fills a row's arguments with harmless words. */
const someArgs = (row: CommandSpec) => row.args.filter((a) => !a.optional).map((a) => `some-${a.name.toLowerCase()}`);

/** The bad command lines every row must refuse before it does anything: a stray flag, a wrong count, a bad value. */
function badLines(row: CommandSpec): Array<{ why: string; argv: string[] }> {
  const lines = [{ why: "an unknown flag", argv: [...row.words, ...someArgs(row), "--no-such-flag"] }];
  lines.push(
    row.args.some((a) => !a.optional)
      ? { why: "a missing argument", argv: [...row.words] }
      : { why: "an extra argument", argv: [...row.words, ...row.args.map((a) => `some-${a.name}`), "one-too-many"] },
  );
  const flags = Object.entries(row.flags);
  const parsed = flags.find(([, flag]) => flag.type === "string" && flag.parse);
  const text = flags.find(([, flag]) => flag.type === "string");
  const boolean = flags.find(([, flag]) => flag.type === "boolean");
  if (parsed)
    lines.push({ why: `a bad --${parsed[0]}`, argv: [...row.words, ...someArgs(row), `--${parsed[0]}`, "banana"] });
  else if (text)
    lines.push({ why: `--${text[0]} without its value`, argv: [...row.words, ...someArgs(row), `--${text[0]}`] });
  else if (boolean)
    lines.push({
      why: `a value for --${boolean[0]}`,
      argv: [...row.words, ...someArgs(row), `--${boolean[0]}=banana`],
    });
  return lines;
}

function expectOneSentence(result: Answer, what: string): void {
  expect(result.code, `${what}: ${result.stderr}`).toBe(2);
  expect(result.stdout, what).toBe("");
  expect(result.stderr, what).toMatch(/^personalclaw: [^\n]+--help`\.\n$/);
  expect(result.stderr, what).not.toMatch(STACK);
}

describe("the command line, for every row of the command table", () => {
  it("refuses a bad command line for every command with exit 2, one sentence pointing at its --help, no stack", async () => {
    const home = join(scratch, "never-started");
    const cases = COMMANDS.flatMap((row) => badLines(row).map((c) => ({ ...c, row })));
    expect(cases.length).toBeGreaterThan(COMMANDS.length * 2);
    for (const { row, why, argv } of cases) {
      const what = `${row.words.join(" ")} with ${why}`;
      const result = await answer([...argv, "--home", home]);
      expectOneSentence(result, what);
      expect(result.stderr, what).toContain(` ${row.words.join(" ")} --help\`.`);
    }
    // Nothing ran: a refused command line never creates the home.
    expect(existsSync(home)).toBe(false);
  });

  it("names the problem: an unknown command with a close guess, a port out of range, a lifetime that is no duration", async () => {
    const guess = await answer(["aps", "list"]);
    expectOneSentence(guess, "aps");
    expect(guess.stderr).toContain("there is no command 'aps' (did you mean apps?)");
    const sub = await answer(["apps", "lst"]);
    expectOneSentence(sub, "apps lst");
    expect(sub.stderr).toContain("'apps' has no subcommand 'lst' (did you mean list?)");
    const port = await answer(["start", "--port", "-1", "--home", join(scratch, "port")]);
    expectOneSentence(port, "--port -1");
    expect(port.stderr).toContain('--port "-1" is not a port');
    expect(existsSync(join(scratch, "port"))).toBe(false);
    const ttl = await answer(["token", "--ttl", "banana"]);
    expectOneSentence(ttl, "--ttl banana");
    expect(ttl.stderr).toContain('--ttl "banana" is not a duration');
    const flag = await answer(["security", "events", "--outcome"]);
    expectOneSentence(flag, "--outcome");
    expect(flag.stderr).toContain("--outcome needs a value");
    const group = await answer(["apps"]);
    expectOneSentence(group, "apps");
    expect(group.stderr).toContain("'apps' needs a subcommand");
  });

  it("--json turns a usage error into the error envelope on stdout, exit 2", async () => {
    const result = await answer(["token", "--json", "--ttl", "banana"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe("");
    const envelope = JSON.parse(result.stdout);
    expect(envelope.error.code).toBe("cli_usage");
    expect(envelope.error.message).toContain("--ttl");
  });

  it("answers --help for every command and group, and `help <command>`, with exit 0 and each flag named", async () => {
    for (const row of COMMANDS) {
      const result = await answer([...row.words, "--help"]);
      expect(result.code, row.words.join(" ")).toBe(0);
      expect(result.stdout).toContain(`${row.words.join(" ")}`);
      expect(result.stdout.startsWith("Usage: ")).toBe(true);
      for (const flag of [...Object.keys(row.flags), "home"]) expect(result.stdout).toContain(`--${flag}`);
    }
    const groups = [...new Set(COMMANDS.filter((r) => r.words.length > 1).map((r) => r.words[0]))];
    for (const group of groups) {
      const result = await answer([group, "--help"]);
      expect(result.code).toBe(0);
      for (const row of COMMANDS.filter((r) => r.words[0] === group)) expect(result.stdout).toContain(row.words[1]);
    }
    const top = await answer(["--help"]);
    expect(top.code).toBe(0);
    for (const row of COMMANDS) expect(top.stdout).toContain(row.words.join(" "));
    const helpInstall = await answer(["help", "apps", "install"]);
    const dashH = await answer(["apps", "install", "-h"]);
    expect(helpInstall.code).toBe(0);
    expect(helpInstall.stdout).toBe(dashH.stdout);
    expect(helpInstall.stdout).toContain("--consent DIGEST | --yes");
  });
});
