import { describe, expect, it } from "vitest";
import { COMMANDS } from "./commands";
import { completionScript } from "./shell-completion";

describe("completion scripts generated from the command table", () => {
  it("fish offers every first word, every subcommand under its group, and every flag under its command", () => {
    const fish = completionScript("fish", "personalclaw", COMMANDS);
    for (const row of COMMANDS) {
      const [first, second] = row.words;
      expect(fish).toContain(`-n __fish_use_subcommand -a ${first} `);
      if (second) expect(fish).toContain(`'__fish_seen_subcommand_from ${first}; and not __fish_seen_subcommand_from `);
      const condition = row.words.map((word) => `__fish_seen_subcommand_from ${word}`).join("; and ");
      for (const flag of Object.keys(row.flags)) expect(fish).toContain(`-n '${condition}' -l ${flag}`);
    }
    expect(fish).toContain("-l home -r -F");
  });

  it("zsh reads the bash function through bashcompinit", () => {
    const zsh = completionScript("zsh", "personalclaw", COMMANDS);
    expect(zsh.split("\n")[0]).toBe("#compdef personalclaw");
    expect(zsh).toContain("autoload -U +X bashcompinit && bashcompinit");
    expect(zsh).toContain("complete -o default -F _personalclaw personalclaw");
  });

  it("quotes a summary with an apostrophe so the shell reads it whole", () => {
    const row = { ...COMMANDS[0]!, words: ["odd"], summary: "it's here", flags: {} };
    expect(completionScript("fish", "personalclaw", [row])).toContain("-a odd -d 'it'\\''s here'");
  });
});
