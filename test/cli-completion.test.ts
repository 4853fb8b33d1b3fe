// Shell completion as a shell runs it: bash loads the script `personalclaw completion bash` prints
// and its completion function answers from the command table.
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeHome, removeHome, runCli } from "./helpers/gateway";

const run = promisify(execFile);

describe("personalclaw completion bash", () => {
  let home: string;
  let script: string;
  beforeAll(async () => {
    home = makeHome();
    const printed = await runCli(["completion", "bash", "--home", home]);
    expect(printed).toMatchObject({ code: 0, stderr: "" });
    script = join(home, "personalclaw.bash");
    writeFileSync(script, printed.stdout);
  }, 60_000);
  afterAll(() => removeHome(home));

  /** What bash offers for the words typed so far, the last one being completed. */
  async function complete(...words: string[]): Promise<string[]> {
    const quoted = words.map((word) => `'${word}'`).join(" ");
    const { stdout } = await run("bash", [
      "--noprofile",
      "--norc",
      "-c",
      `source "$1"; COMP_WORDS=(personalclaw ${quoted}); COMP_CWORD=${words.length}; COMP_LINE="personalclaw ${words.join(" ")}"; _personalclaw; printf '%s\\n' "\${COMPREPLY[@]}"`,
      "bash",
      script,
    ]);
    return stdout.split("\n").filter((line) => line !== "");
  }

  it("registers its function for personalclaw", async () => {
    const { stdout } = await run("bash", [
      "--noprofile",
      "--norc",
      "-c",
      'source "$1"; complete -p personalclaw',
      "bash",
      script,
    ]);
    expect(stdout.trim()).toBe("complete -o default -F _personalclaw personalclaw");
  });

  it("completes `personalclaw ap<TAB>` to the groups starting so", async () => {
    expect(await complete("ap")).toEqual(["apps", "approvals"]);
  });

  it("completes `personalclaw apps <TAB>` to every apps subcommand the table has", async () => {
    const offered = await complete("apps", "");
    expect(offered).toEqual(
      expect.arrayContaining(["new", "dev", "preview", "install", "add", "list", "update", "uninstall"]),
    );
    expect(offered).not.toContain("apps");
    expect(offered).not.toContain("start");
  });

  it("completes a command's flags, skipping the value of a flag that takes one", async () => {
    expect(await complete("--home", "/tmp/x", "apps", "install", "--")).toEqual(
      expect.arrayContaining(["--yes", "--consent", "--json", "--home", "--help"]),
    );
    expect(await complete("token", "--t")).toEqual(["--ttl"]);
  });

  it("refuses a shell it writes no script for, with exit 2", async () => {
    const answer = await runCli(["completion", "powershell", "--home", home]);
    expect(answer.code).toBe(2);
    expect(answer.stderr).toMatch(/'powershell' is not a shell completion is written for/);
  });
});
