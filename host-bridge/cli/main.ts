// The personalclaw command line. Each command is one module; this file only dispatches.
import { parseArgs } from "node:util";
import { readSettings } from "../settings";
import { startGateway } from "./start";
import { runDoctor } from "./doctor";
import { runToken, runRotateKey } from "./token";
import {
  runSecurityAcknowledge,
  runSecurityCheckpoint,
  runSecurityEvents,
  runSecuritySeed,
  runSecurityVerify,
  runSecurityWitness,
} from "./security";
import { GatewayNotRunning } from "./gateway-client";
import { appAction, runAppsInstall, runAppsList, runAppsPreview, runAppsPurge, runAppsUpdate } from "./apps";
import { runStop } from "./stop";
import { runApprovalsAnswer, runApprovalsGrants, runApprovalsList, runApprovalsRevoke } from "./approvals";
import {
  runConfigGet,
  runConfigSet,
  runSecretsAssign,
  runSecretsDelete,
  runSecretsList,
  runSecretsSet,
} from "./settings";
import { storageFullReason } from "../../workers/contracts/storage-full";
import { runAppsJobs, runMcpList, runMcpPath, runMcpRetry, runMcpRun } from "./mcp";

const USAGE = `Usage: personalclaw <command>

  start [--port N] [--home DIR] [--json-ready] [--accept-state-loss]
                                                  run the gateway; --accept-state-loss continues
                                                  although a store the state manifest knows is gone
  stop                                            stop the running gateway of the home
  doctor [--json]                                 check this machine and home
  token [--ttl D]                                 print a sign-in link (default 20h, at most 90d)
  auth rotate-key                                 replace the signing key; every session ends
  security events [--kind K] [--limit N] [--json] show security events, newest first
  security verify [--json]                        verify the security log's chain (exit 1 if broken)
  security verify --checkpoint FILE [--public-key FILE|KEY] [--seed CODE] [--json]
                                                  offline: prove the stored log extends a checkpoint
                                                  (public key only; default FILE.pub); --seed recomputes every mac
  security checkpoint [--out FILE] [--json]       sign the head; write the note to FILE, its key to FILE.pub
  security seed --show                            the seed's verification code (PERSONALCLAW_SEL_SEED_PASSPHRASE)
  security witness <url>                          show each checkpoint to a witness and keep its cosignatures
  security acknowledge                            record that you know the security-log anchor was lost
  apps preview <folder> [--json]                  review a folder (works without a running gateway)
  apps install <folder> [--consent D | --yes] [--adopt-data] [--json]
                                                  --adopt-data takes over data an earlier install of the name kept
  apps list [--parked] [--json]                   --parked lists kept data/ folders and whose install each is
  apps purge <name> [--json]                      delete the kept data/ of a name for good
  apps update <name> <folder> [--consent D | --yes] [--json]   kept only if the new backend is healthy
  apps enable|disable|restart <name> [--json]
  apps uninstall <name> [--purge-data] [--json]   data/ is kept unless --purge-data
  apps jobs <name> [--json]                       an app's scheduled jobs, next fires and history
  mcp path                                        print the MCP server map agents read (mcp.json)
  mcp list [--json]                               the apps' MCP servers: state and last start
  mcp run <app> <server>                          start an app's MCP server in its sandbox (stdio)
  mcp retry <app> <server> [--json]               start a server again after 3 failed starts
  approvals list [--all] [--json]                 what waits for your answer (--all: every approval)
  approvals approve <id> [--scope once|1h|30d|always] [--json]
                                                  a scope other than once answers the next same asks too
  approvals deny <id> [--json]
  approvals grants [--json]                       the live grants scoped answers left
  approvals revoke <grant-id> [--json]
  config get [<path>] [--json]                    the editable settings with their meaning, or one value
  config set <path> <value> [--add | --remove] [--confirm] [--json]
                                                  a loosening change needs --confirm; applies at the next start
  secrets set <NAME> [--json]                     store or replace a secret; the value is read from stdin
                                                  or a prompt, never from the command line
  secrets list [--json]                           names, whether stored, which apps use each (never a value)
  secrets delete <NAME> [--json]
  secrets assign <NAME> <app> [--as DECLARED] [--json]
                                                  give a stored secret to an app that declared it
`;

type Command = (args: string[], home: string) => Promise<number>;

/** Runs the CLI; returns the process exit status. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const settings = readSettings();
  const withHome = (args: string[]) => {
    const index = args.indexOf("--home");
    if (index >= 0 && args[index + 1]) {
      settings.home = args[index + 1];
      return [...args.slice(0, index), ...args.slice(index + 2)];
    }
    return args;
  };
  const commands: Record<string, Command> = {
    doctor: (args, home) => runDoctor(args, { ...settings, home }),
    stop: (_args, home) => runStop(home),
    token: (args, home) => runToken(args, home),
    "auth rotate-key": (_args, home) => runRotateKey(home),
    "security events": (args, home) => runSecurityEvents(args, home),
    "security verify": (args, home) => runSecurityVerify(args, home),
    "security acknowledge": (_args, home) => runSecurityAcknowledge(home),
    "security checkpoint": (args, home) => runSecurityCheckpoint(args, home),
    "security seed": (args, home) => runSecuritySeed(args, home, settings.seedPassphrase),
    "security witness": (args, home) => runSecurityWitness(args, home),
    "apps preview": (args, home) => runAppsPreview(args, home),
    "apps install": (args, home) => runAppsInstall(args, home),
    "apps list": (args, home) => runAppsList(args, home),
    "apps enable": appAction("enable"),
    "apps disable": appAction("disable"),
    "apps restart": appAction("restart"),
    "apps update": (args, home) => runAppsUpdate(args, home),
    "apps uninstall": appAction("uninstall"),
    "apps purge": (args, home) => runAppsPurge(args, home),
    "apps jobs": (args, home) => runAppsJobs(args, home),
    "mcp path": (args, home) => runMcpPath(args, home),
    "mcp list": (args, home) => runMcpList(args, home),
    "mcp run": (args, home) => runMcpRun(args, home),
    "mcp retry": (args, home) => runMcpRetry(args, home),
    "approvals list": (args, home) => runApprovalsList(args, home),
    "approvals approve": (args, home) => runApprovalsAnswer("approve", args, home),
    "approvals deny": (args, home) => runApprovalsAnswer("deny", args, home),
    "approvals grants": (args, home) => runApprovalsGrants(args, home),
    "approvals revoke": (args, home) => runApprovalsRevoke(args, home),
    "config get": (args, home) => runConfigGet(args, home),
    "config set": (args, home) => runConfigSet(args, home),
    "secrets set": (args, home) => runSecretsSet(args, home),
    "secrets list": (args, home) => runSecretsList(args, home),
    "secrets delete": (args, home) => runSecretsDelete(args, home),
    "secrets assign": (args, home) => runSecretsAssign(args, home),
  };
  try {
    if (command === "start") {
      const { values } = parseArgs({
        args: rest,
        options: {
          port: { type: "string" },
          home: { type: "string" },
          "json-ready": { type: "boolean" },
          "accept-state-loss": { type: "boolean" },
        },
      });
      if (values.home) settings.home = values.home;
      if (values.port !== undefined) {
        const port = Number(values.port);
        if (!Number.isInteger(port) || port < 0 || port > 65535) {
          process.stderr.write(`personalclaw: --port must be a number from 0 to 65535.\n`);
          return 2;
        }
        settings.port = port;
      }
      return await startGateway({
        settings,
        jsonReady: Boolean(values["json-ready"]),
        acceptStateLoss: Boolean(values["accept-state-loss"]),
      });
    }
    const two = `${command} ${rest[0] ?? ""}`;
    if (commands[two]) {
      const args = withHome(rest.slice(1));
      return await commands[two](args, settings.home);
    }
    if (command && commands[command]) {
      const args = withHome(rest);
      return await commands[command](args, settings.home);
    }
    process.stderr.write(USAGE);
    return command === undefined || command === "help" || command === "--help" ? 0 : 2;
  } catch (error) {
    if (error instanceof GatewayNotRunning) {
      process.stderr.write(`personalclaw: ${error.message}\n`);
      return 1;
    }
    const full = storageFullReason(error);
    if (full !== null) {
      process.stderr.write(
        `personalclaw: the disk holding ${settings.home} is full (${full}); free some space and try again.\n`,
      );
      return 1;
    }
    throw error;
  }
}
