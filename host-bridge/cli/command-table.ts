// The shape of one row of the CLI's command table (commands-*.ts hold the rows by command
// family, commands.ts assembles them). A row is the whole truth about a command: the words that
// name it, its arguments, its flags with their types and one-line help, whether it only reads,
// and its handler. Parsing, --help, the usage lines and docs/cli.md all come from the rows;
// nothing keeps a second list.
import type { Settings } from "../settings";

/** A parsed value or the reason the text is not one (the usage error names it). */
export type ParsedValue<T> = { ok: true; value: T } | { ok: false; reason: string };

export interface BooleanFlag {
  type: "boolean";
  help: string;
}

export interface StringFlag<T = string> {
  type: "string";
  /** The placeholder help shows: --ttl DURATION. */
  value: string;
  help: string;
  /** Checks and converts the text; without it the text is the value. */
  parse?: (text: string) => ParsedValue<T>;
  /** May be given more than once: the value is the list of every one, in order. */
  repeatable?: true;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a row's flags may convert to any type
export type FlagSpec = BooleanFlag | StringFlag<any>;

type OneFlagValue<F> = F extends BooleanFlag
  ? boolean
  : F extends { parse: (text: string) => ParsedValue<infer T> }
    ? T
    : string;
type FlagValue<F> = F extends { repeatable: true } ? OneFlagValue<F>[] : OneFlagValue<F>;
export type FlagValues<F extends Record<string, FlagSpec>> = { [K in keyof F]?: FlagValue<F[K]> };

export interface ArgSpec {
  name: string;
  help: string;
  optional?: boolean;
}

/** What every handler gets besides its own input: the resolved home and the settings. */
export interface CliContext {
  home: string;
  settings: Settings;
}

export interface CommandInput<F extends Record<string, FlagSpec>> {
  flags: FlagValues<F>;
  /** The arguments in the order the row declares them; an optional one left out is absent. */
  args: string[];
}

export interface CommandSpec<F extends Record<string, FlagSpec> = Record<string, FlagSpec>> {
  /** The words that name it: ["apps", "install"]. */
  words: string[];
  summary: string;
  /** Lines help adds below the summary. */
  details?: string[];
  args: ArgSpec[];
  flags: F;
  /** A read command changes nothing and always offers --json. */
  reads: boolean;
  /** Flags that cannot be given together. */
  exclusive?: Array<[keyof F & string, keyof F & string]>;
  run: (input: CommandInput<F>, cli: CliContext) => Promise<number>;
}

/** Every JSON-capable command spells --json the same way. */
export const jsonFlag = { type: "boolean", help: "print the answer (or the error envelope) as one JSON line" } as const;

/** Flags the parser gives every command. */
export const GLOBAL_FLAGS = {
  home: {
    type: "string",
    value: "DIR",
    help: "the PersonalClaw home (default ~/.personalclaw, or PERSONALCLAW_HOME)",
  },
  help: { type: "boolean", help: "show this help (also -h)" },
} as const satisfies Record<string, FlagSpec>;

const FLAG_NAME = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;

/**
 * One row, checked when the table is built: a read command without --json, a flag that
 * shadows a global one, or an optional argument before a required one is a defect of the
 * table, refused at load rather than found by a user.
 */
export function defineCommand<F extends Record<string, FlagSpec>>(spec: CommandSpec<F>): CommandSpec {
  const name = spec.words.join(" ");
  if (spec.reads && !("json" in spec.flags)) throw new Error(`${name}: a read command must offer --json`);
  for (const flag of Object.keys(spec.flags)) {
    if (!FLAG_NAME.test(flag)) throw new Error(`${name}: --${flag} is not a kebab-case flag name`);
    if (flag in GLOBAL_FLAGS) throw new Error(`${name}: --${flag} is a flag every command has`);
  }
  const firstOptional = spec.args.findIndex((arg) => arg.optional);
  if (firstOptional >= 0 && spec.args.slice(firstOptional).some((arg) => !arg.optional))
    throw new Error(`${name}: a required argument follows an optional one`);
  return spec as unknown as CommandSpec;
}

/** The table's own rule: no two rows share their words, and a group word is never also a command. */
export function checkTable(table: readonly CommandSpec[]): readonly CommandSpec[] {
  const names = new Set<string>();
  for (const row of table) {
    const name = row.words.join(" ");
    if (names.has(name)) throw new Error(`two rows are named ${name}`);
    names.add(name);
  }
  for (const row of table)
    if (row.words.length === 1 && table.some((other) => other.words.length > 1 && other.words[0] === row.words[0]))
      throw new Error(`${row.words[0]} is both a command and a group`);
  return table;
}
