// The `apps` commands in the CLI's command table (commands.ts): write, preview, install, add,
// update and remove apps, and look at their jobs and folders. Every command that installs
// bytes takes the same consent flags; one that generates an app from a source also takes what
// the owner adds to it (--env, --folder, --arg), all shown in the review.
import { runAppsDev } from "./app-dev";
import { runAppsNew } from "./app-scaffold";
import { runAppAction, runAppsInstall, runAppsList, runAppsPreview, runAppsPurge, runAppsUpdate } from "./apps";
import { runAppsAdd, runAppsUpdateFromSource } from "./apps-add";
import { runAppsOutdated } from "./apps-outdated";
import { isSourceSpec } from "../sources/generate-from-source";
import { parseEnvAssignment, parseFolderNeed, parseServerArgument } from "../sources/npm-app";
import { parseUserConfigAssignment } from "../sources/mcpb-user-config";
import { folderEnvName } from "../../kernel/contracts/folder-grants";
import { defineCommand, jsonFlag, type CommandSpec } from "./command-table";
import { runAppsFolders } from "./folders";
import { countValue, digestValue, timeValue } from "./flag-values";
import { UPCOMING_FIRES_MAX } from "../../kernel/contracts/scheduled-jobs";
import { runAppsJobs } from "./mcp";
import { UsageError } from "./usage-error";

const consentFlags = {
  consent: {
    type: "string",
    value: "DIGEST",
    help: "consent to exactly the bytes with this digest (as `apps preview` prints it)",
    parse: digestValue,
  },
  yes: { type: "boolean", help: "consent to the review just shown (refused if the folder changes meanwhile)" },
  json: jsonFlag,
} as const;

/** A variable for a generated MCP server, `NAME=VALUE`, repeatable. */
const envFlag = {
  type: "string",
  value: "NAME=VALUE",
  help: "a variable for the server (repeatable); shown in the review and covered by the consent",
  parse: parseEnvAssignment,
  repeatable: true,
} as const;

/** A folder need for a generated app, `NEED[:read|:read-write]`, repeatable. */
const folderFlag = {
  type: "string",
  value: "NEED[:ACCESS]",
  help: "a folder need the app declares, :read (the default) or :read-write (repeatable); you grant a folder to it with `apps folders`",
  parse: parseFolderNeed,
  repeatable: true,
} as const;

/** An argument for a generated MCP server, repeatable. */
const argFlag = {
  type: "string",
  value: "VALUE",
  help: "an argument after the server's program (repeatable, in order); a granted folder is /folders/NEED inside",
  parse: parseServerArgument,
  repeatable: true,
} as const;

/** A value for a non-sensitive user_config field of an .mcpb bundle, `KEY=VALUE`, repeatable. */
const userConfigFlag = {
  type: "string",
  value: "KEY=VALUE",
  help: "a value for a user_config field of an .mcpb bundle (repeatable); a sensitive field is refused here: store it with `secrets set`",
  parse: parseUserConfigAssignment,
  repeatable: true,
} as const;

/** What the owner adds to an app generated from a source: each shown in the review and covered by the consent. */
const generatedAppFlags = { env: envFlag, folder: folderFlag, arg: argFlag, "user-config": userConfigFlag } as const;

/** Two --folder needs of one name (or whose variables collide, `a-b` and `a_b`) are one need named twice. */
function refuseRepeatedNeeds(folders: ReadonlyArray<{ name: string }> | undefined, words: string[]): void {
  const seen = new Set<string>();
  for (const { name } of folders ?? []) {
    if (seen.has(folderEnvName(name)))
      throw new UsageError(`--folder names the need '${name}' twice (case and - or _ aside)`, words);
    seen.add(folderEnvName(name));
  }
}

function appAction(action: "enable" | "disable" | "restart", summary: string): CommandSpec {
  return defineCommand({
    words: ["apps", action],
    summary,
    args: [{ name: "name", help: "the installed app" }],
    flags: { json: jsonFlag },
    reads: false,
    run: ({ flags, args }, { home }) => runAppAction(action, home, args[0], flags),
  });
}

/** The apps commands, in the order help lists them. */
export const APPS_COMMANDS: readonly CommandSpec[] = [
  defineCommand({
    words: ["apps", "new"],
    summary: "Create a working app folder: manifest, a backend that verifies signed requests, a UI page, a test.",
    details: ["The folder installs unchanged: `apps preview <folder>`, then `apps install <folder>`."],
    args: [{ name: "name", help: "the app's name (kebab-case, as the manifest requires)" }],
    flags: {
      python: { type: "boolean", help: "a Python backend instead of a Node one" },
      dir: { type: "string", value: "DIR", help: "the folder to create (default ./<name>)" },
    },
    reads: false,
    run: ({ flags, args }) => runAppsNew(args[0], flags),
  }),
  defineCommand({
    words: ["apps", "dev"],
    summary: "Preview a folder, watch it, re-preview on each change and offer the install or update.",
    details: [
      "Every offer goes through the normal consent path: the review and its digest are shown and the",
      "gateway installs only those bytes. Answer y to accept; --yes accepts each offer.",
    ],
    args: [{ name: "folder", help: "the app folder you are writing" }],
    flags: {
      yes: { type: "boolean", help: "accept each install or update without asking" },
      "debounce-ms": {
        type: "string",
        value: "MS",
        help: "how long the folder must be quiet before a re-preview (default 300)",
        parse: countValue(60_000),
      },
    },
    reads: false,
    run: ({ flags, args }, { home }) => runAppsDev(home, args[0], flags),
  }),
  defineCommand({
    words: ["apps", "preview"],
    summary: "Review a folder: what it would get and run, and its consent digest (works without a running gateway).",
    args: [{ name: "folder", help: "the app folder" }],
    flags: { json: jsonFlag },
    reads: true,
    run: ({ flags, args }, { home }) => runAppsPreview(home, args[0], flags),
  }),
  defineCommand({
    words: ["apps", "install"],
    summary: "Install a folder after you consented to exactly its reviewed bytes.",
    args: [{ name: "folder", help: "the app folder" }],
    flags: {
      ...consentFlags,
      "adopt-data": { type: "boolean", help: "take over the data/ an earlier install of the name kept" },
    },
    exclusive: [["consent", "yes"]],
    reads: false,
    run: ({ flags, args }, { home }) => runAppsInstall(home, args[0], flags),
  }),
  defineCommand({
    words: ["apps", "add"],
    summary: "Install a published MCP server as a confined app: its whole closure pinned, reviewed and consented to.",
    details: [
      "Resolves the package from install.npm_registry, pins every package by its integrity and shows the review;",
      "a pypi: project comes from install.pypi_index, every wheel of its closure pinned by its sha256.",
      "An .mcpb bundle (a path, or an https:// URL) is read whole and pinned by its sha256; the review says its signature state.",
      "A registry: entry comes from the first of install.mcp_registries that has it; its npm, PyPI or .mcpb package is installed so.",
      "`${DATA}` in an --env value stands for the app's data folder as the server sees it.",
      "--folder documents:read-write declares a need; the server sees nothing of your files until you grant",
      "a folder to it (`apps folders <app> set documents <path>`), then sees that folder at /folders/documents:",
      "pass it with --arg /folders/documents to a server that takes its folders as arguments.",
      "An .mcpb bundle's user_config fields take --user-config KEY=VALUE; a sensitive one becomes a secret of the app:",
      "store it with `secrets set NAME` and `secrets assign NAME <app>`, and its MCP server gets it in its environment.",
    ],
    args: [
      {
        name: "source",
        help: "npm:<name>@<exact version>, pypi:<name>==<exact version>, registry:<server name>[@<version>] or a path or https:// URL of an .mcpb bundle",
      },
    ],
    flags: {
      ...consentFlags,
      ...generatedAppFlags,
    },
    exclusive: [["consent", "yes"]],
    reads: false,
    run: ({ flags, args }, { home }) => {
      refuseRepeatedNeeds(flags.folder, ["apps", "add"]);
      return runAppsAdd(home, args[0], flags);
    },
  }),
  defineCommand({
    words: ["apps", "list"],
    summary: "The installed apps: version, origin, enabled, backend health.",
    args: [],
    flags: {
      parked: { type: "boolean", help: "list the kept data/ folders and whose install each is" },
      json: jsonFlag,
    },
    reads: true,
    run: ({ flags }, { home }) => runAppsList(home, flags),
  }),
  defineCommand({
    words: ["apps", "outdated"],
    summary: "Ask each installed app's package source whether it has a newer version; installs nothing.",
    details: [
      "An app added from npm:, pypi: or registry: is checked against the source you configured now",
      "(install.npm_registry, install.pypi_index, install.mcp_registries); each newer version is shown",
      "with the `apps update <name> <spec>` command, which reviews it and asks consent when anything changed.",
    ],
    args: [{ name: "name", help: "only this app", optional: true }],
    flags: { json: jsonFlag },
    reads: true,
    run: ({ flags, args }, { home }) => runAppsOutdated(home, args[0], flags),
  }),
  defineCommand({
    words: ["apps", "update"],
    summary: "Update an app from a folder or its source; kept only if the new backend is healthy.",
    details: [
      "No consent is asked when nothing you consented to changes.",
      "From npm:, pypi: or registry: the source is resolved again; for npm the review lists the closure's changes.",
    ],
    args: [
      { name: "name", help: "the installed app" },
      {
        name: "folder",
        help: "the folder with its new version, or its source: npm:<name>@<version>, pypi:<name>==<version>, registry:<name>[@<version>], an .mcpb",
      },
    ],
    flags: {
      ...consentFlags,
      env: { ...envFlag, help: `${envFlag.help} (from a source only, not a folder)` },
      folder: { ...folderFlag, help: `${folderFlag.help} (from a source only, not a folder)` },
      arg: { ...argFlag, help: `${argFlag.help} (from a source only, not a folder)` },
      "user-config": { ...userConfigFlag, help: `${userConfigFlag.help} (from a source only, not a folder)` },
    },
    exclusive: [["consent", "yes"]],
    reads: false,
    run: ({ flags, args }, { home }) => {
      refuseRepeatedNeeds(flags.folder, ["apps", "update"]);
      if (isSourceSpec(args[1])) return runAppsUpdateFromSource(home, args[0], args[1], flags);
      for (const flag of ["env", "folder", "arg", "user-config"] as const)
        if (flags[flag]?.length)
          throw new UsageError(`--${flag} applies to an update from a source, not from a folder`, ["apps", "update"]);
      return runAppsUpdate(home, args[0], args[1], flags);
    },
  }),
  appAction("enable", "Enable an app and start its backend."),
  appAction("disable", "Disable an app: its backend stops and its tokens are revoked."),
  appAction("restart", "Restart an app's backend."),
  defineCommand({
    words: ["apps", "uninstall"],
    summary: "Uninstall an app; its data/ is kept unless --purge-data.",
    args: [{ name: "name", help: "the installed app" }],
    flags: { "purge-data": { type: "boolean", help: "delete its data/ too" }, json: jsonFlag },
    reads: false,
    run: ({ flags, args }, { home }) => runAppAction("uninstall", home, args[0], flags),
  }),
  defineCommand({
    words: ["apps", "purge"],
    summary: "Delete the kept data/ of an uninstalled name for good.",
    args: [{ name: "name", help: "the name whose data/ was kept" }],
    flags: { json: jsonFlag },
    reads: false,
    run: ({ flags, args }, { home }) => runAppsPurge(home, args[0], flags),
  }),
  defineCommand({
    words: ["apps", "jobs"],
    summary: "An app's scheduled jobs: next fires and history; --count N lists each job's next N fires.",
    args: [{ name: "name", help: "the installed app" }],
    flags: {
      from: {
        type: "string",
        value: "ISO-TIME",
        help: "list the fires after this time (2026-03-08T00:00:00Z) instead of now",
        parse: timeValue,
      },
      count: {
        type: "string",
        value: "N",
        help: "how many upcoming fires of each job to list (1-100; 5 with --from)",
        parse: countValue(UPCOMING_FIRES_MAX),
      },
      json: jsonFlag,
    },
    reads: true,
    run: ({ flags, args }, { home }) => runAppsJobs(home, args[0], flags),
  }),
  defineCommand({
    words: ["apps", "folders"],
    summary: "An app's folder needs and the folders you granted; grant one (set) or take it back (revoke).",
    details: [
      "apps folders APP: each need, where it appears inside (/folders/NEED) and the folder granted to it.",
      "apps folders APP set NEED PATH: grant PATH to NEED, read-only unless --read-write (only where the need allows it).",
      "apps folders APP revoke NEED: take it back. Either one restarts a running backend and ends running MCP servers.",
      "A link, `/`, a system folder, the PersonalClaw home or a folder holding it is refused; a whole home folder only with --whole-home.",
    ],
    args: [
      { name: "app", help: "the installed app" },
      { name: "action", help: "set or revoke (none: list)", optional: true },
      { name: "need", help: "the need's name, as the app declares it", optional: true },
      { name: "path", help: "set: the folder to grant", optional: true },
    ],
    flags: {
      "read-write": { type: "boolean", help: "set: grant read-write (the need must allow it)" },
      "whole-home": { type: "boolean", help: "set: you mean to grant a whole home folder" },
      json: jsonFlag,
    },
    reads: false,
    run: ({ flags, args }, { home }) =>
      runAppsFolders(home, args, {
        json: flags.json,
        readWrite: flags["read-write"],
        wholeHome: flags["whole-home"],
      }),
  }),
];
