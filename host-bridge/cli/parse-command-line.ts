// Reads argv against the command table: which row, its flags (typed, checked) and arguments.
// Every refusal is a UsageError naming the one problem; nothing here prints or exits.
import { GLOBAL_FLAGS, type CommandSpec, type FlagSpec } from "./command-table";
import { UsageError } from "./usage-error";

export type ParsedCommandLine =
  | { kind: "run"; spec: CommandSpec; flags: Record<string, unknown>; args: string[]; home: string | undefined }
  | { kind: "help"; words: string[] }
  | { kind: "version" };

/** Edit distance, for "did you mean". */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length];
}

/** The closest candidate when it is close enough to be a slip; null otherwise. */
export function closest(word: string, candidates: readonly string[]): string | null {
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const d = candidate.startsWith(word) && word.length >= 2 ? 1 : distance(word, candidate);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best !== null && bestDistance <= Math.max(1, Math.floor(best.length / 3)) ? best : null;
}

const didYouMean = (guess: string | null) => (guess === null ? "" : ` (did you mean ${guess}?)`);

const isFlagToken = (token: string) => token.startsWith("-") && token !== "-" && !/^-\d/.test(token);

/** The top-level words: every group and one-word command, plus help and version. */
export function topWords(table: readonly CommandSpec[]): string[] {
  return [...new Set(table.map((row) => row.words[0])), "help", "version"];
}

/** Finds the row `words` name, or says which word is wrong. */
export function findRow(table: readonly CommandSpec[], words: readonly string[]): CommandSpec | "group" {
  const [first, second] = words;
  const rows = table.filter((row) => row.words[0] === first);
  if (rows.length === 0) {
    const guess = closest(first, topWords(table));
    throw new UsageError(`there is no command '${first}'${didYouMean(guess)}`, []);
  }
  const single = rows.find((row) => row.words.length === 1);
  if (single) return single;
  if (second === undefined || isFlagToken(second)) return "group";
  const sub = rows.find((row) => row.words[1] === second);
  if (sub) return sub;
  const guess = closest(
    second,
    rows.map((row) => row.words[1]),
  );
  throw new UsageError(`'${first}' has no subcommand '${second}'${didYouMean(guess)}`, [first]);
}

/** Parses one command line. */
export function parseCommandLine(table: readonly CommandSpec[], argv: readonly string[]): ParsedCommandLine {
  const [first] = argv;
  if (first === undefined || first === "--help" || first === "-h") return { kind: "help", words: [] };
  if (first === "--version") {
    if (argv.length > 1) throw new UsageError(`--version takes nothing after it`, []);
    return { kind: "version" };
  }
  if (first === "help") {
    const words = argv.slice(1);
    if (words.length > 2 || words.some(isFlagToken)) throw new UsageError("help takes a command's words only", []);
    if (words.length > 0) {
      const row = findRow(table, words);
      if (row !== "group" && row.words.length < words.length)
        throw new UsageError(`'${row.words.join(" ")}' has no subcommand '${words[row.words.length]}'`, row.words);
    }
    return { kind: "help", words };
  }
  if (isFlagToken(first)) {
    const guess = closest(first.replace(/^-+/, ""), ["help", "version"]);
    throw new UsageError(`${first} is not a flag of personalclaw itself${didYouMean(guess && `--${guess}`)}`, []);
  }
  const found = findRow(table, argv.slice(0, 2));
  if (found === "group") {
    const second = argv[1];
    if (second === "--help" || second === "-h") return { kind: "help", words: [first] };
    throw new UsageError(
      `'${first}' needs a subcommand${second === undefined ? "" : ` before ${second}`}: one of ${table
        .filter((row) => row.words[0] === first)
        .map((row) => row.words[1])
        .join(", ")}`,
      [first],
    );
  }
  return parseRowArguments(found, argv.slice(found.words.length));
}

function parseRowArguments(spec: CommandSpec, tokens: readonly string[]): ParsedCommandLine {
  const name = spec.words.join(" ");
  const flagsOf: Record<string, FlagSpec> = { ...spec.flags, ...GLOBAL_FLAGS };
  const flags: Record<string, unknown> = {};
  const args: string[] = [];
  let home: string | undefined;
  let onlyArguments = false;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    if (onlyArguments || !isFlagToken(token)) {
      args.push(token);
      continue;
    }
    if (token === "--") {
      onlyArguments = true;
      continue;
    }
    if (token === "-h") return { kind: "help", words: spec.words };
    const [flagName, inlineValue] = token.startsWith("--")
      ? ((eq) => (eq < 0 ? [token.slice(2), undefined] : [token.slice(2, eq), token.slice(eq + 1)]))(token.indexOf("="))
      : [token, undefined];
    const flag = token.startsWith("--") ? flagsOf[flagName] : undefined;
    if (flag === undefined) {
      const guess = closest(flagName.replace(/^-+/, ""), Object.keys(flagsOf));
      throw new UsageError(
        `'${name}' has no flag ${token.split("=")[0]}${didYouMean(guess && `--${guess}`)}`,
        spec.words,
      );
    }
    if (flagName === "help") return { kind: "help", words: spec.words };
    if (flag.type === "boolean") {
      if (inlineValue !== undefined) throw new UsageError(`--${flagName} takes no value`, spec.words);
      flags[flagName] = true;
      continue;
    }
    const text = inlineValue ?? tokens[++i];
    if (text === undefined) throw new UsageError(`--${flagName} needs a value (${flag.value})`, spec.words);
    if (flagName === "home") {
      if (text === "") throw new UsageError("--home needs a folder", spec.words);
      home = text;
      continue;
    }
    const parsed = flag.parse ? flag.parse(text) : { ok: true as const, value: text };
    if (!parsed.ok) throw new UsageError(`--${flagName} ${JSON.stringify(text)} ${parsed.reason}`, spec.words);
    flags[flagName] = flag.repeatable
      ? [...((flags[flagName] as unknown[] | undefined) ?? []), parsed.value]
      : parsed.value;
  }
  for (const [a, b] of spec.exclusive ?? [])
    if (flags[a] !== undefined && flags[b] !== undefined)
      throw new UsageError(`--${a} and --${b} cannot be given together`, spec.words);
  const required = spec.args.filter((arg) => !arg.optional);
  if (args.length < required.length)
    throw new UsageError(`'${name}' needs <${required[args.length].name}>`, spec.words);
  if (args.length > spec.args.length)
    throw new UsageError(
      `'${name}' takes ${spec.args.length === 0 ? "no arguments" : `at most ${spec.args.length} argument${spec.args.length === 1 ? "" : "s"}`}; '${args[spec.args.length]}' is one too many`,
      spec.words,
    );
  return { kind: "run", spec, flags, args, home };
}
