// What must hold before `personalclaw start` writes anything the gateway runs on: no gateway
// already running for the home, a readable security-log key, no lost state (unless the owner
// accepts the loss), a valid config.json and a port nobody else holds. Each refusal is one
// sentence on stderr; lost state is noticed before anything could write over it.
import { existsSync, readdirSync } from "node:fs";
import { authModeInForce, type AuthMode } from "../../kernel/contracts/auth-mode";
import { DURABLE_OBJECT_CLASSES, storeFolder } from "../durable-object-stores";
import { pickFreePort } from "../free-port";
import { ensureHome, readOrCreateSelKey, type HomePaths } from "../home";
import { recoverRestore } from "../durability/restore-journal";
import { readOwnerConfig, type OwnerConfig } from "../owner-config";
import { readAnchorFile, type AnchorFile } from "../sel-anchor";
import {
  describeStateLoss,
  findStateLoss,
  readStateManifest,
  type StateLoss,
  type StateManifest,
} from "../state-manifest";
import { isRecordedWorkerdAlive, readGatewayFile, readLiveGateway, removeGatewayFile } from "./gateway-file";
import { isPortFree, portInUseMessage } from "./port-owner";
import type { StartOptions } from "./start";

/** The namespaces of the gateway's stores, as the state manifest counts them. */
export const STORE_NAMESPACES = DURABLE_OBJECT_CLASSES.map((d) => d.uniqueKey);

/** What the checks found, for the start that follows them. */
export interface StartPlan {
  paths: HomePaths;
  selKey: { keyHex: string; firstSeed: string | null };
  manifest: StateManifest | null;
  /** Stores the manifest knows that are gone: empty unless the owner accepted their loss. */
  losses: StateLoss[];
  /** The anchor file as found; a home whose security log has no storage yet has nothing to lose. */
  anchorAtStart: AnchorFile | { state: "ok" };
  config: OwnerConfig;
  mode: { mode: AuthMode; warning: string | null };
  bindHost: string;
  port: number;
}

// A gateway.json whose CLI process is gone (or is now another process) is stale: the workerd it
// left behind is ended only when it is still the very process that start recorded (pid, start
// time and executable), so a process that merely reused a pid survives.
function clearStaleGateway(paths: HomePaths): void {
  const stale = readGatewayFile(paths);
  if (!stale) return;
  if (isRecordedWorkerdAlive(stale)) process.kill(stale.workerdPid!, "SIGKILL");
  removeGatewayFile(paths);
}

/** True when the security log has storage: a missing anchor then means one was lost. */
function securityLogExists(paths: HomePaths): boolean {
  const dir = storeFolder(paths.state, "SecurityLog");
  return existsSync(dir) && readdirSync(dir).some((file) => file.endsWith(".sqlite"));
}

function refuse(sentence: string): null {
  process.stderr.write(`personalclaw: ${sentence}\n`);
  return null;
}

/** Runs every check in order; null when the start is refused (the reason is on stderr). */
export async function planStart(options: StartOptions): Promise<StartPlan | null> {
  const { settings } = options;
  // A restore a kill interrupted is settled before the home is even made (restore-journal.ts).
  if ((await recoverRestore(settings.home)) === "in_progress")
    return refuse(`a restore of ${settings.home} is under way; start the gateway once it has finished.`);
  const paths = ensureHome(settings.home);
  const running = readLiveGateway(paths);
  if (running)
    return refuse(`a gateway is already running for ${paths.home} (pid ${running.pid}, port ${running.port}).`);
  clearStaleGateway(paths);
  const selKey = await readOrCreateSelKey(paths);
  if (!selKey.ok) return refuse(`refusing to start: ${selKey.reason}`);
  // Lost state is noticed before anything could write over it.
  const manifest = readStateManifest(paths.home);
  const losses = findStateLoss(manifest, paths.state, STORE_NAMESPACES);
  if (losses.length > 0 && !options.acceptStateLoss)
    return refuse(
      `refusing to start: state the gateway had is gone:\n${describeStateLoss(paths.state, manifest!, losses)}`,
    );
  const anchorAtStart = securityLogExists(paths) ? readAnchorFile(paths.selAnchor) : { state: "ok" as const };
  const config = readOwnerConfig(paths.home);
  if (!config.ok) return refuse(`refusing to start: ${config.reason}`);
  const mode = authModeInForce({ AUTH_MODE_REQUESTED: settings.authModeRequested });
  const bindHost =
    mode.mode === "none" ? "127.0.0.1" : settings.bindHostFromEnv ? settings.bindHost : config.config.gateway.bind_host;
  // A port someone else holds stops the start here, before a credential exists to send.
  if (settings.port !== 0 && !(await isPortFree(bindHost, settings.port)))
    return refuse(`${portInUseMessage(settings.port)}.`);
  const port = settings.port === 0 ? await pickFreePort(bindHost) : settings.port;
  return { paths, selKey, manifest, losses, anchorAtStart, config: config.config, mode, bindHost, port };
}
