// `personalclaw completion`, the one command whose handler reads the command table itself: the
// table hands itself in (commands.ts), so this row never imports the list it belongs to.
import { defineCommand, type CommandSpec } from "./command-table";
import { COMPLETION_SHELLS, completionScript, type CompletionShell } from "./shell-completion";
import { UsageError } from "./usage-error";

/** The completion row, completing the commands `table` answers when it runs. */
export function completionCommand(table: () => readonly CommandSpec[]): CommandSpec {
  return defineCommand({
    words: ["completion"],
    summary: "Print a shell completion script for bash, zsh or fish, generated from this command table.",
    details: [
      "bash: source <(personalclaw completion bash), or save it in ~/.local/share/bash-completion/completions/personalclaw.",
      "zsh: source <(personalclaw completion zsh) in ~/.zshrc.",
      "fish: personalclaw completion fish > ~/.config/fish/completions/personalclaw.fish.",
    ],
    args: [{ name: "SHELL", help: "bash, zsh or fish" }],
    flags: {},
    reads: false,
    run: async ({ args }) => {
      const shell = args[0]!;
      if (!(COMPLETION_SHELLS as readonly string[]).includes(shell))
        throw new UsageError(`'${shell}' is not a shell completion is written for: use bash, zsh or fish`, [
          "completion",
        ]);
      process.stdout.write(completionScript(shell as CompletionShell, "personalclaw", table()));
      return 0;
    },
  });
}
