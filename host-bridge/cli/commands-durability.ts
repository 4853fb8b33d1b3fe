// The `backup` and `restore` commands in the CLI's command table (commands.ts): one archive of
// the whole home, and a home rebuilt or completed from one (docs/backup-and-restore.md).
import { defineCommand, jsonFlag, type CommandSpec } from "./command-table";
import { runBackup } from "./backup";
import { runRestore, RESTORE_MODES, type RestoreMode } from "./restore";

const passphraseFile = {
  type: "string",
  value: "FILE",
  help: "read the passphrase from the first line of FILE (otherwise standard input or a prompt; never an argument)",
} as const;

/** The backup and restore commands, in the order help lists them. */
export const DURABILITY_COMMANDS: readonly CommandSpec[] = [
  defineCommand({
    words: ["backup"],
    summary: "Write one archive of the whole gateway (apps, data, settings, secrets, the log), sealed to a passphrase.",
    details: [
      "The gateway keeps running and its apps keep writing; the archive is written under a temporary name and renamed only once whole.",
    ],
    args: [],
    flags: {
      out: {
        type: "string",
        value: "FILE",
        help: "where to write the archive (default personalclaw-<date>.pcbackup here)",
      },
      "passphrase-file": passphraseFile,
      json: jsonFlag,
    },
    reads: false,
    run: ({ flags }, { home }) => runBackup(home, flags),
  }),
  defineCommand({
    words: ["restore"],
    summary: "Check an archive and show what it would restore; with --mode, restore it into the home.",
    details: [
      "Without --mode nothing is written: the archive is verified and the plan printed.",
      "--mode replace rebuilds a stopped gateway's home from the archive (all or nothing, even if killed).",
      "--mode merge adds to a running gateway the apps, data and secrets it lacks, and reports each item.",
    ],
    args: [{ name: "archive", help: "the archive file `personalclaw backup` wrote" }],
    flags: {
      mode: {
        type: "string",
        value: "replace|merge",
        help: "restore instead of only checking",
        parse: (text: string) =>
          (RESTORE_MODES as readonly string[]).includes(text)
            ? { ok: true, value: text as RestoreMode }
            : { ok: false, reason: "--mode is replace or merge" },
      },
      "passphrase-file": passphraseFile,
      json: jsonFlag,
    },
    reads: false,
    run: ({ flags, args }, { home }) => runRestore(home, args[0]!, flags),
  }),
];
