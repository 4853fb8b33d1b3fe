// A command line the table (or a handler's own check) refuses: exit 2, one sentence naming the
// problem, and the --help to read. Never a stack trace: it is the user's slip, not a bug.
export const EXIT_USAGE = 2;

export class UsageError extends Error {
  /** The words of the command whose --help the sentence points at; empty for the top level. */
  readonly words: readonly string[];
  constructor(problem: string, words: readonly string[]) {
    super(problem);
    this.words = words;
  }
}
