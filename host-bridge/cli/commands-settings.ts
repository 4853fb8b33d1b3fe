// The `config` and `secrets` commands in the CLI's command table (commands.ts): the owner's
// settings, and the secrets the owner stores and gives to apps.
import { defineCommand, jsonFlag, type CommandSpec } from "./command-table";
import {
  runConfigGet,
  runConfigSet,
  runSecretsAssign,
  runSecretsDelete,
  runSecretsList,
  runSecretsSet,
} from "./settings";

/** The config and secrets commands, in the order help lists them. */
export const SETTINGS_COMMANDS: readonly CommandSpec[] = [
  defineCommand({
    words: ["config", "get"],
    summary: "The editable settings with their meaning, or one value.",
    args: [{ name: "path", help: "one setting, such as auth.session_ttl", optional: true }],
    flags: { json: jsonFlag },
    reads: true,
    run: ({ flags, args }, { home }) => runConfigGet(home, args[0], flags),
  }),
  defineCommand({
    words: ["config", "set"],
    summary: "Change a setting; a loosening change needs --confirm; it applies at the next start.",
    args: [
      { name: "path", help: "the setting" },
      { name: "value", help: "its new value (a list: comma separated)" },
    ],
    flags: {
      add: { type: "boolean", help: "add the value to a list setting" },
      remove: { type: "boolean", help: "remove the value from a list setting" },
      confirm: { type: "boolean", help: "apply a change that loosens security" },
      json: jsonFlag,
    },
    exclusive: [["add", "remove"]],
    reads: false,
    run: ({ flags, args }, { home }) => runConfigSet(home, args[0], args[1], flags),
  }),
  defineCommand({
    words: ["secrets", "set"],
    summary: "Store or replace a secret; the value is read from stdin or a prompt, never from the command line.",
    args: [{ name: "NAME", help: "the secret's name" }],
    flags: { json: jsonFlag },
    reads: false,
    run: ({ flags, args }, { home }) => runSecretsSet(home, args[0], flags),
  }),
  defineCommand({
    words: ["secrets", "list"],
    summary: "Secret names, whether stored, which apps use each (never a value).",
    args: [],
    flags: { json: jsonFlag },
    reads: true,
    run: ({ flags }, { home }) => runSecretsList(home, flags),
  }),
  defineCommand({
    words: ["secrets", "delete"],
    summary: "Delete a secret and take it back from the apps that had it.",
    args: [{ name: "NAME", help: "the secret's name" }],
    flags: { json: jsonFlag },
    reads: false,
    run: ({ flags, args }, { home }) => runSecretsDelete(home, args[0], flags),
  }),
  defineCommand({
    words: ["secrets", "assign"],
    summary:
      "Give a stored secret to an app that declared it; for one the app never holds, choose where its value is sent.",
    args: [
      { name: "NAME", help: "the stored secret" },
      { name: "app", help: "the app that declared it" },
    ],
    flags: {
      as: { type: "string", value: "DECLARED", help: "the name the app declared, when it differs" },
      origin: {
        type: "string",
        value: "https://HOST[:PORT]",
        help: "an origin the value is written to, in place of the ones the app declared (repeatable; each covered by the app's network grant); without it, the declared origins",
        repeatable: true,
      },
      json: jsonFlag,
    },
    reads: false,
    run: ({ flags, args }, { home }) => runSecretsAssign(home, args[0], args[1], flags),
  }),
];
