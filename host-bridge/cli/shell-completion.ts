// `personalclaw completion bash|zsh|fish`: a completion script generated from the command table,
// so every command, subcommand and flag the parser knows completes, and nothing else does.
import { GLOBAL_FLAGS, type CommandSpec, type FlagSpec } from "./command-table";

export const COMPLETION_SHELLS = ["bash", "zsh", "fish"] as const;
export type CompletionShell = (typeof COMPLETION_SHELLS)[number];

interface CompletionFacts {
  /** The first words, in table order: a command or a group. */
  firsts: string[];
  /** Each group's second words. */
  subcommands: Map<string, string[]>;
  /** Each command's flags, the global ones included, as `--name`. */
  flags: Map<string, string[]>;
  /** Every flag that takes a value (its next word is not a command word). */
  valueFlags: string[];
  summaries: Map<string, string>;
}

function flagWords(flags: Record<string, FlagSpec>): string[] {
  return Object.keys(flags).map((name) => `--${name}`);
}

function facts(table: readonly CommandSpec[]): CompletionFacts {
  const out: CompletionFacts = {
    firsts: [],
    subcommands: new Map(),
    flags: new Map(),
    valueFlags: [],
    summaries: new Map(),
  };
  const valueFlags = new Set<string>();
  const globals = { ...GLOBAL_FLAGS } as Record<string, FlagSpec>;
  for (const row of table) {
    const [first, second] = row.words as [string, string | undefined];
    if (!out.firsts.includes(first)) out.firsts.push(first);
    if (second !== undefined) out.subcommands.set(first, [...(out.subcommands.get(first) ?? []), second]);
    const all = { ...row.flags, ...globals };
    out.flags.set(row.words.join(" "), flagWords(all));
    out.summaries.set(row.words.join(" "), row.summary);
    for (const [name, spec] of Object.entries(all)) if (spec.type === "string") valueFlags.add(`--${name}`);
  }
  out.valueFlags = [...valueFlags].sort();
  return out;
}

const shellWord = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

function bashScript(program: string, f: CompletionFacts): string {
  const fn = `_${program.replace(/[^A-Za-z0-9_]/g, "_")}`;
  const groupCases = [...f.subcommands].map(([group, subs]) => `    ${group}) words=${shellWord(subs.join(" "))} ;;`);
  const flagCases = [...f.flags].map(
    ([command, flags]) => `    ${shellWord(command)}) words=${shellWord(flags.join(" "))} ;;`,
  );
  return [
    `# ${program} completion for bash (and zsh through bashcompinit), generated from its command table.`,
    `# Load it with: source <(${program} completion bash)`,
    `${fn}() {`,
    '  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"',
    `  local value_flags=${shellWord(` ${f.valueFlags.join(" ")} `)}`,
    "  local -a typed=()",
    "  local i word skip=0",
    "  for ((i = 1; i < COMP_CWORD; i++)); do",
    '    word="${COMP_WORDS[i]}"',
    "    if ((skip)); then skip=0; continue; fi",
    '    if [[ "$value_flags" == *" $word "* ]]; then skip=1; continue; fi',
    '    [[ "$word" == -* ]] || typed+=("$word")',
    "  done",
    '  if [[ "$value_flags" == *" $prev "* ]]; then',
    '    COMPREPLY=($(compgen -f -- "$cur"))',
    "    return",
    "  fi",
    "  local command words=''",
    '  case "${typed[0]}" in',
    ...[...f.subcommands.keys()].map((group) => `    ${group}) command="${group} \${typed[1]}" ;;`),
    '    *) command="${typed[0]}" ;;',
    "  esac",
    "  if ((${#typed[@]} == 0)); then",
    `    words=${shellWord(f.firsts.join(" "))}`,
    '  elif ((${#typed[@]} == 1)) && [[ "$command" == *" " ]]; then',
    '    case "${typed[0]}" in',
    ...groupCases,
    "    esac",
    "  fi",
    '  if [[ "$cur" == -* || -z "$words" ]]; then',
    '    case "$command" in',
    ...flagCases,
    `    *) words=${shellWord(flagWords(GLOBAL_FLAGS).join(" "))} ;;`,
    "    esac",
    "  fi",
    '  COMPREPLY=($(compgen -W "$words" -- "$cur"))',
    "}",
    `complete -o default -F ${fn} ${program}`,
    "",
  ].join("\n");
}

function zshScript(program: string, f: CompletionFacts): string {
  return [
    `#compdef ${program}`,
    `# ${program} completion for zsh: the bash completion, read through zsh's bashcompinit.`,
    `# Load it with: source <(${program} completion zsh)`,
    "autoload -U +X bashcompinit && bashcompinit",
    bashScript(program, f)
      .split("\n")
      .filter((line) => !line.startsWith("#"))
      .join("\n"),
  ].join("\n");
}

function fishScript(program: string, f: CompletionFacts): string {
  const lines = [
    `# ${program} completion for fish, generated from its command table.`,
    `# Load it with: ${program} completion fish | source`,
    `complete -c ${program} -f`,
  ];
  const groups = [...f.subcommands.keys()];
  for (const first of f.firsts) {
    const summary = f.summaries.get(first) ?? `${first} commands`;
    lines.push(`complete -c ${program} -n __fish_use_subcommand -a ${first} -d ${shellWord(summary)}`);
  }
  for (const group of groups) {
    const subs = f.subcommands.get(group)!;
    const none = `not __fish_seen_subcommand_from ${subs.join(" ")}`;
    for (const sub of subs) {
      const summary = f.summaries.get(`${group} ${sub}`) ?? "";
      lines.push(
        `complete -c ${program} -n ${shellWord(`__fish_seen_subcommand_from ${group}; and ${none}`)} -a ${sub} -d ${shellWord(summary)}`,
      );
    }
  }
  for (const [command, flags] of f.flags) {
    const words = command.split(" ");
    const condition = words.map((word) => `__fish_seen_subcommand_from ${word}`).join("; and ");
    for (const flag of flags) {
      const takesValue = f.valueFlags.includes(flag) ? " -r -F" : "";
      lines.push(`complete -c ${program} -n ${shellWord(condition)} -l ${flag.slice(2)}${takesValue}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

/** The completion script for `shell`, completing `program` by the rows of `table`. */
export function completionScript(shell: CompletionShell, program: string, table: readonly CommandSpec[]): string {
  const f = facts(table);
  if (shell === "bash") return bashScript(program, f);
  if (shell === "zsh") return zshScript(program, f);
  return fishScript(program, f);
}
