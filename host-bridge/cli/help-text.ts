// --help, `help <command>`, the top-level usage and docs/cli.md, all rendered from the command
// table, so what the CLI says it accepts is what its parser accepts.
import { GLOBAL_FLAGS, type CommandSpec, type FlagSpec } from "./command-table";

function flagWords(name: string, flag: FlagSpec): string {
  return flag.type === "boolean" ? `--${name}` : `--${name} ${flag.value}`;
}

/** `apps install <folder> [--consent DIGEST | --yes] [--adopt-data] [--json]` */
export function usageLine(program: string, spec: CommandSpec): string {
  const parts = [program, ...spec.words];
  for (const arg of spec.args) parts.push(arg.optional ? `[<${arg.name}>]` : `<${arg.name}>`);
  const paired = new Set<string>();
  for (const [a, b] of spec.exclusive ?? []) {
    parts.push(`[${flagWords(a, spec.flags[a])} | ${flagWords(b, spec.flags[b])}]`);
    paired.add(a).add(b);
  }
  for (const [name, flag] of Object.entries(spec.flags))
    if (!paired.has(name)) parts.push(`[${flagWords(name, flag)}]`);
  return parts.join(" ");
}

function columns(rows: Array<[string, string]>): string[] {
  const width = Math.min(28, Math.max(...rows.map(([left]) => left.length)));
  return rows.map(([left, right]) =>
    left.length > width ? `  ${left}\n  ${" ".repeat(width)}  ${right}` : `  ${left.padEnd(width)}  ${right}`,
  );
}

/** The help of one command. */
export function commandHelp(program: string, spec: CommandSpec): string {
  const lines = [`Usage: ${usageLine(program, spec)}`, "", `${spec.summary}`];
  if (spec.details) lines.push(...spec.details);
  if (spec.args.length > 0) {
    lines.push("", "Arguments:");
    lines.push(
      ...columns(spec.args.map((arg) => [`<${arg.name}>`, `${arg.help}${arg.optional ? " (optional)" : ""}`])),
    );
  }
  lines.push("", "Flags:");
  const flags: Array<[string, string]> = Object.entries(spec.flags).map(([name, flag]) => [
    flagWords(name, flag),
    flag.help,
  ]);
  flags.push([flagWords("home", GLOBAL_FLAGS.home), GLOBAL_FLAGS.home.help], ["-h, --help", "show this help"]);
  lines.push(...columns(flags));
  return `${lines.join("\n")}\n`;
}

function commandList(program: string, rows: readonly CommandSpec[]): string[] {
  return columns(
    rows.map((row) => [
      [...row.words, ...row.args.map((a) => (a.optional ? `[<${a.name}>]` : `<${a.name}>`))].join(" "),
      row.summary,
    ]),
  );
}

/** The help of a group such as `apps`: its subcommands. */
export function groupHelp(program: string, table: readonly CommandSpec[], group: string): string {
  const rows = table.filter((row) => row.words[0] === group);
  return `Usage: ${program} ${group} <subcommand> [flags]\n\nSubcommands:\n${commandList(program, rows).join("\n")}\n\nRun \`${program} ${group} <subcommand> --help\` for one subcommand's arguments and flags.\n`;
}

/** The top-level usage. */
export function topHelp(program: string, table: readonly CommandSpec[]): string {
  return `Usage: ${program} <command> [flags]

A single-owner gateway that hosts third-party apps for a personal AI agent without trusting them.

Commands:
${commandList(program, table).join("\n")}

Every command takes --home DIR (default ~/.personalclaw, or PERSONALCLAW_HOME) and --help.
Run \`${program} help <command>\` for a command's arguments and flags; \`${program} --version\` for the version.
`;
}

/** docs/cli.md: the reference of every command, in table order. */
export function cliReference(table: readonly CommandSpec[]): string {
  const program = "personalclaw";
  const out = [
    "# The personalclaw command",
    "",
    "Generated from the CLI's command table (`host-bridge/cli/commands.ts`) by `npm run docs:cli`; a test",
    "regenerates it and compares the bytes.",
    "",
    "Every command takes `--home DIR` (default `~/.personalclaw`, or `PERSONALCLAW_HOME`) and `--help` (`-h`).",
    "A read command takes `--json`: it then prints its answer as one JSON line, or an error as",
    '`{"error":{"code","message"}}`. `personalclaw --version` prints the version.',
    "",
    "Every command exits 0 when it did what it was asked; 1 when the gateway refused it or it failed, with",
    "one sentence (a refusal names its stable code in brackets; under `--json`, `error.code` says which",
    "and why); 2 when its command line cannot be read, with one sentence naming the problem.",
    "",
  ];
  for (const spec of table) {
    out.push(`## ${program} ${spec.words.join(" ")}`, "", "```", usageLine(program, spec), "```", "");
    out.push(spec.summary + (spec.reads ? " Reads only." : ""));
    if (spec.details) out.push("", ...spec.details);
    if (spec.args.length > 0 || Object.keys(spec.flags).length > 0) {
      out.push("", "| argument or flag | meaning |", "|---|---|");
      for (const arg of spec.args) out.push(`| \`<${arg.name}>\`${arg.optional ? " (optional)" : ""} | ${arg.help} |`);
      for (const [name, flag] of Object.entries(spec.flags))
        out.push(`| \`${flagWords(name, flag)}\` | ${flag.help} |`);
    }
    out.push("");
  }
  return out.join("\n");
}
