// The CLI's command table: one row per command. main.ts parses argv against it, --help and
// docs/cli.md are rendered from it; a command exists only once it has a row here.
import { APPROVAL_SCOPES } from "../../kernel/contracts/approvals";
import { SecurityOutcomeSchema } from "../../kernel/contracts/security-event";
import { runApprovalsAnswer, runApprovalsGrants, runApprovalsList, runApprovalsRevoke } from "./approvals";
import { runAppsDev } from "./app-dev";
import { runAppsNew } from "./app-scaffold";
import { runAppAction, runAppsInstall, runAppsList, runAppsPreview, runAppsPurge, runAppsUpdate } from "./apps";
import { isSourceSpec, runAppsAdd, runAppsUpdateFromSource } from "./apps-add";
import { parseEnvAssignment } from "../sources/npm-app";
import { checkTable, defineCommand, jsonFlag, type CommandSpec } from "./command-table";
import { runDoctor } from "./doctor";
import { runAppsFolders } from "./folders";
import { countValue, digestValue, durationValue, oneOf, portValue, timeValue } from "./flag-values";
import { runAppsJobs, runMcpList, runMcpPath, runMcpRetry, runMcpRun } from "./mcp";
import {
  runSecurityAcknowledge,
  runSecurityCheckpoint,
  runSecurityEvents,
  runSecuritySeed,
  runSecurityVerify,
  runSecurityWitness,
  runSecurityAdmit,
} from "./security";
import {
  runConfigGet,
  runConfigSet,
  runSecretsAssign,
  runSecretsDelete,
  runSecretsList,
  runSecretsSet,
} from "./settings";
import { startGateway } from "./start";
import { runStatus, runVersion } from "./status";
import { runStop } from "./stop";
import { UsageError } from "./usage-error";
import { runRotateKey, runToken } from "./token";

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

export const COMMANDS: readonly CommandSpec[] = checkTable([
  defineCommand({
    words: ["start"],
    summary: "Run the gateway of the home until Ctrl-C; prints one ready line with the sign-in link.",
    args: [],
    flags: {
      port: {
        type: "string",
        value: "PORT",
        help: "the port to listen on (default 10000 or PERSONALCLAW_PORT; 0 picks a free one)",
        parse: portValue,
      },
      "json-ready": { type: "boolean", help: "print the ready line as JSON (url, port, home, pid)" },
      "accept-state-loss": {
        type: "boolean",
        help: "start although a store the state manifest knows is missing, empty or replaced",
      },
    },
    reads: false,
    run: ({ flags }, { settings, home }) =>
      startGateway({
        settings: { ...settings, home, ...(flags.port !== undefined ? { port: flags.port } : {}) },
        jsonReady: Boolean(flags["json-ready"]),
        acceptStateLoss: Boolean(flags["accept-state-loss"]),
      }),
  }),
  defineCommand({
    words: ["stop"],
    summary: "Stop the home's running gateway (as Ctrl-C would) and wait until it is gone.",
    args: [],
    flags: {},
    reads: false,
    run: (_input, { home }) => runStop(home),
  }),
  defineCommand({
    words: ["status"],
    summary: "Whether the home's gateway runs and answers: its address, version, uptime and app counts.",
    details: ["Exits 1 when no gateway runs for the home."],
    args: [],
    flags: { json: jsonFlag },
    reads: true,
    run: ({ flags }, { home }) => runStatus(home, flags),
  }),
  defineCommand({
    words: ["doctor"],
    summary: "Check this machine and the home; each row says ok, warn or fail and how to fix it.",
    details: ["Exits 1 when a row fails."],
    args: [],
    flags: { json: jsonFlag },
    reads: true,
    run: ({ flags }, { settings, home }) => runDoctor({ ...settings, home }, flags),
  }),
  defineCommand({
    words: ["version"],
    summary: "The package version, with the workerd and Node versions it runs on.",
    args: [],
    flags: { json: jsonFlag },
    reads: true,
    run: ({ flags }) => runVersion(flags),
  }),
  defineCommand({
    words: ["token"],
    summary: "Print a sign-in link for the running gateway (proves you are at this machine).",
    args: [],
    flags: {
      ttl: {
        type: "string",
        value: "DURATION",
        help: "how long the session lasts, such as 30m, 20h or 7d (default 20h, at most 90d)",
        parse: durationValue,
      },
      json: jsonFlag,
    },
    reads: true,
    run: ({ flags }, { home }) => runToken(home, flags),
  }),
  defineCommand({
    words: ["auth", "rotate-key"],
    summary: "Replace the session signing key; every session ends.",
    args: [],
    flags: { json: jsonFlag },
    reads: false,
    run: ({ flags }, { home }) => runRotateKey(home, flags),
  }),
  defineCommand({
    words: ["security", "events"],
    summary: "Show security events, newest first.",
    args: [],
    flags: {
      kind: { type: "string", value: "KIND", help: "only events of this kind" },
      principal: { type: "string", value: "WHO", help: "only events of this principal (owner, app:<name>, cli ...)" },
      outcome: {
        type: "string",
        value: "OUTCOME",
        help: `only events with this outcome (${SecurityOutcomeSchema.options.join(", ")})`,
        parse: oneOf(SecurityOutcomeSchema.options),
      },
      since: { type: "string", value: "TIME", help: "only events at or after this ISO-8601 time", parse: timeValue },
      limit: { type: "string", value: "N", help: "at most N events (1 to 1000)", parse: countValue(1000) },
      json: jsonFlag,
    },
    reads: true,
    run: ({ flags }, { home }) => runSecurityEvents(home, flags),
  }),
  defineCommand({
    words: ["security", "verify"],
    summary: "Verify the security log's chain (exit 1 if it is broken).",
    details: [
      "With --checkpoint it works offline from the stored log: it proves the log extends a signed checkpoint",
      "with the public key alone; --seed recomputes every row's mac too.",
    ],
    args: [],
    flags: {
      checkpoint: { type: "string", value: "FILE", help: "a checkpoint note `security checkpoint` wrote" },
      "public-key": {
        type: "string",
        value: "KEY",
        help: "the checkpoint's public key or its file (default FILE.pub)",
      },
      seed: { type: "string", value: "CODE", help: "the verification code shown at the first start" },
      "epoch0-key": { type: "string", value: "FILE", help: "a log started before epochs: its sel_hmac.key" },
      json: jsonFlag,
    },
    reads: true,
    run: ({ flags }, { home }) => runSecurityVerify(home, flags),
  }),
  defineCommand({
    words: ["security", "checkpoint"],
    summary: "Sign the log's head; with --out write the note to FILE and its public key to FILE.pub.",
    args: [],
    flags: { out: { type: "string", value: "FILE", help: "where to write the checkpoint note" }, json: jsonFlag },
    reads: true,
    run: ({ flags }, { home }) => runSecurityCheckpoint(home, flags),
  }),
  defineCommand({
    words: ["security", "seed"],
    summary: "Show the security log's verification code, unsealed with PERSONALCLAW_SEL_SEED_PASSPHRASE.",
    args: [],
    flags: { show: { type: "boolean", help: "show it (required: the code is never printed unasked)" }, json: jsonFlag },
    reads: true,
    run: ({ flags }, { home, settings }) => runSecuritySeed(home, settings.seedPassphrase, flags),
  }),
  defineCommand({
    words: ["security", "witness"],
    summary: "Show each checkpoint to a witness and keep its cosignatures.",
    args: [{ name: "url", help: "the http(s) address of the witness endpoint" }],
    flags: { json: jsonFlag },
    reads: false,
    run: ({ flags, args }, { home }) => runSecurityWitness(home, args[0], flags),
  }),
  defineCommand({
    words: ["security", "admit"],
    summary: "As a witness: admit a log, so its checkpoints are cosigned here.",
    details: [
      "The log's owner reads its public key from `security checkpoint --json` (or the FILE.pub it wrote)",
      "and hands it to you; only admitted logs are cosigned, at most 100.",
    ],
    args: [{ name: "public-key", help: "the log's checkpoint public key, or a file holding it" }],
    flags: { json: jsonFlag },
    reads: false,
    run: ({ flags, args }, { home }) => runSecurityAdmit(home, args[0], flags),
  }),
  defineCommand({
    words: ["security", "acknowledge"],
    summary: "Record that you know the security-log anchor was lost (doctor stops failing).",
    args: [],
    flags: { json: jsonFlag },
    reads: false,
    run: ({ flags }, { home }) => runSecurityAcknowledge(home, flags),
  }),
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
      "`${DATA}` in an --env value stands for the app's data folder as the server sees it.",
    ],
    args: [{ name: "source", help: "npm:<name>@<exact version> or pypi:<name>==<exact version>" }],
    flags: {
      ...consentFlags,
      env: envFlag,
    },
    exclusive: [["consent", "yes"]],
    reads: false,
    run: ({ flags, args }, { home }) => runAppsAdd(home, args[0], flags),
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
    words: ["apps", "update"],
    summary: "Update an app from a folder or its source; kept only if the new backend is healthy.",
    details: [
      "No consent is asked when nothing you consented to changes.",
      "From npm: or pypi: the source is resolved again; for npm: the review lists the closure's changes.",
    ],
    args: [
      { name: "name", help: "the installed app" },
      {
        name: "folder",
        help: "the folder with its new version, npm:<name>@<exact version> or pypi:<name>==<exact version>",
      },
    ],
    flags: { ...consentFlags, env: { ...envFlag, help: `${envFlag.help} (with npm: only)` } },
    exclusive: [["consent", "yes"]],
    reads: false,
    run: ({ flags, args }, { home }) => {
      if (isSourceSpec(args[1])) return runAppsUpdateFromSource(home, args[0], args[1], flags);
      if (flags.env?.length)
        throw new UsageError("--env applies to an update from npm:<name>@<version>", ["apps", "update"]);
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
    summary: "An app's scheduled jobs: next fires and history.",
    args: [{ name: "name", help: "the installed app" }],
    flags: { json: jsonFlag },
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
  defineCommand({
    words: ["mcp", "path"],
    summary: "Print where the MCP server map agents read (mcp.json) is.",
    args: [],
    flags: { json: jsonFlag },
    reads: true,
    run: ({ flags }, { home }) => runMcpPath(home, flags),
  }),
  defineCommand({
    words: ["mcp", "list"],
    summary: "The apps' MCP servers: state and last start.",
    args: [],
    flags: { json: jsonFlag },
    reads: true,
    run: ({ flags }, { home }) => runMcpList(home, flags),
  }),
  defineCommand({
    words: ["mcp", "run"],
    summary: "Start an app's MCP server in its sandbox and speak MCP on stdin and stdout.",
    args: [
      { name: "app", help: "the installed app" },
      { name: "server", help: "a server the app declares" },
    ],
    flags: {},
    reads: false,
    run: ({ args }, { home }) => runMcpRun(home, args[0], args[1]),
  }),
  defineCommand({
    words: ["mcp", "retry"],
    summary: "Let a server start again after 3 failed starts.",
    args: [
      { name: "app", help: "the installed app" },
      { name: "server", help: "a server the app declares" },
    ],
    flags: { json: jsonFlag },
    reads: false,
    run: ({ flags, args }, { home }) => runMcpRetry(home, args[0], args[1], flags),
  }),
  defineCommand({
    words: ["approvals", "list"],
    summary: "What waits for your answer.",
    args: [],
    flags: { all: { type: "boolean", help: "every approval, answered ones too" }, json: jsonFlag },
    reads: true,
    run: ({ flags }, { home }) => runApprovalsList(home, flags),
  }),
  defineCommand({
    words: ["approvals", "approve"],
    summary: "Approve a waiting ask; a scope other than once answers the next same asks too.",
    args: [{ name: "id", help: "the approval" }],
    flags: {
      scope: {
        type: "string",
        value: "SCOPE",
        help: `how long the yes holds: ${APPROVAL_SCOPES.join(", ")} (default once)`,
        parse: oneOf(APPROVAL_SCOPES),
      },
      json: jsonFlag,
    },
    reads: false,
    run: ({ flags, args }, { home }) => runApprovalsAnswer("approve", home, args[0], flags),
  }),
  defineCommand({
    words: ["approvals", "deny"],
    summary: "Deny a waiting ask.",
    args: [{ name: "id", help: "the approval" }],
    flags: { json: jsonFlag },
    reads: false,
    run: ({ flags, args }, { home }) => runApprovalsAnswer("deny", home, args[0], flags),
  }),
  defineCommand({
    words: ["approvals", "grants"],
    summary: "The live grants scoped answers left.",
    args: [],
    flags: { json: jsonFlag },
    reads: true,
    run: ({ flags }, { home }) => runApprovalsGrants(home, flags),
  }),
  defineCommand({
    words: ["approvals", "revoke"],
    summary: "Revoke a grant; its asker asks again.",
    args: [{ name: "grant-id", help: "the grant" }],
    flags: { json: jsonFlag },
    reads: false,
    run: ({ flags, args }, { home }) => runApprovalsRevoke(home, args[0], flags),
  }),
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
    summary: "Give a stored secret to an app that declared it.",
    args: [
      { name: "NAME", help: "the stored secret" },
      { name: "app", help: "the app that declared it" },
    ],
    flags: {
      as: { type: "string", value: "DECLARED", help: "the name the app declared, when it differs" },
      json: jsonFlag,
    },
    reads: false,
    run: ({ flags, args }, { home }) => runSecretsAssign(home, args[0], args[1], flags),
  }),
]);
