import { describe, expect, it } from "vitest";
import { COMMANDS } from "./commands";
import { checkTable, defineCommand, jsonFlag } from "./command-table";
import { closest, parseCommandLine } from "./parse-command-line";
import { UsageError } from "./usage-error";

const problem = (argv: string[]) => {
  try {
    parseCommandLine(COMMANDS, argv);
  } catch (error) {
    if (error instanceof UsageError) return error.message;
    throw error;
  }
  return null;
};

describe("parseCommandLine", () => {
  it("reads flags in both spellings, typed by the row, and the home", () => {
    const parsed = parseCommandLine(COMMANDS, [
      "security",
      "events",
      "--limit=5",
      "--outcome",
      "refused",
      "--home",
      "h",
    ]);
    expect(parsed).toMatchObject({ kind: "run", flags: { limit: 5, outcome: "refused" }, args: [], home: "h" });
    expect(parseCommandLine(COMMANDS, ["start", "--port", "0"])).toMatchObject({ flags: { port: 0 } });
  });

  it("takes words after -- as arguments, and a negative number as an argument", () => {
    expect(parseCommandLine(COMMANDS, ["config", "set", "a.b", "-1"])).toMatchObject({ args: ["a.b", "-1"] });
    expect(parseCommandLine(COMMANDS, ["apps", "preview", "--", "--odd-folder"])).toMatchObject({
      args: ["--odd-folder"],
    });
  });

  it("answers help for --help, -h and help <words>", () => {
    expect(parseCommandLine(COMMANDS, ["apps", "install", "x", "-h"])).toEqual({
      kind: "help",
      words: ["apps", "install"],
    });
    expect(parseCommandLine(COMMANDS, ["help", "apps"])).toEqual({ kind: "help", words: ["apps"] });
    expect(parseCommandLine(COMMANDS, ["apps", "--help"])).toEqual({ kind: "help", words: ["apps"] });
    expect(parseCommandLine(COMMANDS, [])).toEqual({ kind: "help", words: [] });
  });

  it("names each kind of problem in one sentence", () => {
    expect(problem(["tokn"])).toBe("there is no command 'tokn' (did you mean token?)");
    expect(problem(["apps", "instal", "x"])).toBe("'apps' has no subcommand 'instal' (did you mean install?)");
    expect(problem(["token", "--jsn"])).toBe("'token' has no flag --jsn (did you mean --json?)");
    expect(problem(["apps", "install"])).toBe("'apps install' needs <folder>");
    expect(problem(["stop", "now"])).toBe("'stop' takes no arguments; 'now' is one too many");
    expect(problem(["apps", "install", "x", "--yes", "--consent", `sha256:${"0".repeat(64)}`])).toBe(
      "--consent and --yes cannot be given together",
    );
    expect(problem(["doctor", "--json=yes"])).toBe("--json takes no value");
    expect(problem(["approvals", "approve", "a1", "--scope", "forever"])).toBe(
      '--scope "forever" is not one of once, 1h, 30d, always',
    );
  });

  it("guesses only what is close", () => {
    expect(closest("zzzz", ["apps", "token"])).toBeNull();
    expect(closest("sec", ["security", "secrets"])).toBe("security");
  });
});

describe("the table's own rules", () => {
  it("refuses a read command without --json, and two rows with the same words", () => {
    const run = async () => 0;
    expect(() => defineCommand({ words: ["x"], summary: "", args: [], flags: {}, reads: true, run })).toThrow(
      /must offer --json/,
    );
    const row = defineCommand({ words: ["x"], summary: "", args: [], flags: { json: jsonFlag }, reads: true, run });
    expect(() => checkTable([row, row])).toThrow(/two rows/);
  });

  it("every read command in the table offers --json", () => {
    for (const row of COMMANDS.filter((r) => r.reads)) expect(Object.keys(row.flags)).toContain("json");
  });
});
