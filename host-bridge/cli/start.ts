// `personalclaw start`: the host bridge in this process, workerd as its child, one ready
// line. Ctrl-C (or SIGTERM) stops backends, then workerd, then the bridge, within 10 s.
//
// The start is named steps in one order: the checks that may refuse it (start-preflight.ts),
// gateway.log and what the start found (start-notices.ts), the bridge (start-bridge.ts),
// workerd's config and supervision (start-workerd.ts), the way to the ready line
// (start-ready.ts), and the stop (start-shutdown.ts).
import { storageFullReason } from "../../kernel/contracts/storage-full";
import type { EdgeLink, EdgeLinkOptions } from "../edge/edge-link";
import { callBackOverLink } from "../edge/edge-call-back";
import { readEdgeRecord } from "../edge/edge-record";
import { safeLines } from "../../kernel/text/text-safety";
import { openGatewayLog } from "../gateway-log";
import { formatLogLine } from "../gateway-log-line";
import { writeFreshLocalSecret } from "../home";
import { writePrivateFile } from "../private-file";
import { headPath, startAnchorWriter } from "../sel-anchor";
import { sealSeed } from "../sel-seed";
import { startWitnessPoster } from "../sel-witness";
import type { Settings } from "../settings";
import { callGateway } from "./gateway-client";
import type { GatewayRun } from "./gateway-run";
import { commandHint } from "./invocation";
import { claimRuntimeFolder, startBridge } from "./start-bridge";
import { findSetprivOrWarn, noteStartConditions, settleLostAnchor } from "./start-notices";
import { planStart } from "./start-preflight";
import { becomeReady, recordStateManifest, reportStartFailure } from "./start-ready";
import { stopGateway } from "./start-shutdown";
import { superviseWorkerd, workerdConfigFor } from "./start-workerd";
import { renderWorkerdConfig } from "./workerd-config";
import { resetToolStamp } from "../mcp/tool-stamp";
import { openGatewayDoor } from "../sandbox/child-identity";
import type { BridgeRuntime } from "../bridge-runtime";

export interface StartOptions {
  settings: Settings;
  jsonReady: boolean;
  /** --accept-state-loss: start although a store the state manifest knows is missing, empty or replaced. */
  acceptStateLoss?: boolean;
  /** --edge: also link the bridge to the edge this home is paired with (host-bridge/edge/). */
  edge?: boolean;
}

/**
 * The link to the edge this home is paired with; its modules (with undici) are loaded for --edge
 * only. It serves the edge's bridge operations and its relays to this machine's apps, and tells
 * the edge every backend's state again after a lost link.
 */
async function startEdgeLinkOf(
  record: EdgeLinkOptions["record"],
  bridge: { port: number; runtime: BridgeRuntime },
  secret: string,
  settings: Settings,
  log: (line: string) => void,
) {
  const [{ startEdgeLink }, { edgeDispatcher }] = await Promise.all([
    import("../edge/edge-link"),
    import("../edge/edge-dispatcher"),
  ]);
  const { runtime } = bridge;
  return startEdgeLink({
    record,
    bridgeUrl: `http://127.0.0.1:${bridge.port}`,
    secret,
    dispatcher: edgeDispatcher(settings.edgeConnectTo),
    log,
    relay: { endpointOf: (app) => runtime.supervisor.endpoint(app), appsDir: runtime.opts.paths.apps },
    onRelinked: () =>
      void runtime
        .reportAllBackends()
        .catch((error: unknown) => log(`warning edge link: backends not reported again: ${String(error)}`)),
  });
}

/** The gateway's socket for app backends, held by the bridge and carried to the edge (--edge only). */
async function serveAppDoorOf(runtimeFolder: string, link: EdgeLink) {
  const { serveAppDoor } = await import("../edge/app-door");
  const server = await serveAppDoor(runtimeFolder, link);
  openGatewayDoor(runtimeFolder);
  return server;
}

/** Runs the gateway until a signal; returns the exit status. A full disk is a sentence, not a crash. */
export async function startGateway(options: StartOptions): Promise<number> {
  try {
    return await runGateway(options);
  } catch (error) {
    const full = storageFullReason(error);
    if (full === null) throw error;
    process.stderr.write(
      `personalclaw: cannot start: the disk holding ${options.settings.home} is full (${full}); free some space and run \`${commandHint("start")}\` again.\n`,
    );
    return 1;
  }
}

async function runGateway(options: StartOptions): Promise<number> {
  const { settings } = options;
  const plan = await planStart(options);
  if (plan === null) return 1;
  const { paths, selKey } = plan;
  const secret = writeFreshLocalSecret(paths);
  const { max_size_mb, max_files, format } = plan.config.logs;
  const gatewayLog = openGatewayLog(paths.gatewayLog, undefined, undefined, {
    maxBytes: max_size_mb * 1024 * 1024,
    kept: max_files,
  });
  // Every gateway.log line passes the text-safety rule here, whoever wrote it: a message can
  // quote a child's output or an answer, and the file must never hold the gateway's own keys.
  const log = (line: string) =>
    gatewayLog.write(formatLogLine(format, new Date(), safeLines(line, [secret, selKey.keyHex])));
  noteStartConditions(plan, log);
  const anchorLost = settleLostAnchor(plan, log);
  const setpriv = findSetprivOrWarn(log);
  const edge = options.edge ? readEdgeRecord(paths.edge) : null;
  if (edge !== null && edge.found !== "record") {
    process.stderr.write(
      `personalclaw: cannot start --edge: ${edge.found === "none" ? `this home is paired with no edge; run \`${commandHint("edge", "pair")} <url>\` first` : `edge.json is unreadable (${edge.reason})`}.\n`,
    );
    return 1;
  }
  const runtimeFolder = claimRuntimeFolder(paths);
  if (runtimeFolder === null) return 1;
  // Under --edge the bridge's calls back (health, security-log rows, progress) go to the edge over its link.
  let edgeLink: EdgeLink | null = null;
  const state: GatewayRun["state"] = { stopping: false, manifestTimer: null };
  const callBack =
    edge === null
      ? undefined
      : callBackOverLink(
          () => edgeLink,
          () => state.stopping,
        );
  const { runtime, reserve, bridge } = await startBridge(plan, settings, runtimeFolder, secret, log, callBack);

  // Loaded under --edge only: the link's undici is the CLI's largest library.
  edgeLink =
    edge === null ? null : await startEdgeLinkOf(edge.value, { port: bridge.port, runtime }, secret, settings, log);
  // Under --edge the apps' calls to the gateway go to the edge too: the bridge holds their socket, not workerd.
  const appDoor = edgeLink === null ? null : await serveAppDoorOf(runtimeFolder, edgeLink);
  const startedAt = new Date().toISOString();
  const workerdConfig = workerdConfigFor(plan, settings, {
    runtimeFolder,
    secret,
    bridgePort: bridge.port,
    startedAt,
    edge: edgeLink !== null,
  });
  resetToolStamp(paths.toolStamp);
  writePrivateFile(paths.workerdConfig, renderWorkerdConfig(workerdConfig));
  if (selKey.firstSeed !== null && settings.seedPassphrase !== "")
    sealSeed(paths.home, selKey.firstSeed, settings.seedPassphrase);
  const { workerd, record } = superviseWorkerd({
    plan,
    runtimeFolder,
    secret,
    setpriv,
    startedAt,
    bridgePort: bridge.port,
    runtime,
    log,
    isStopping: () => state.stopping,
    servesBackends: workerdConfig.servesBackends !== false,
  });
  const witness = startWitnessPoster(
    paths.selWitness,
    (method, path, body) => callGateway(paths.home, "sel-witness", method, path, body),
    log,
  );
  const anchor = startAnchorWriter(
    paths.selAnchor,
    async (held) => (await callGateway(paths.home, "sel-anchor", "GET", headPath(held))).body,
    log,
  );
  // Under --edge the edge's log is anchored here too, apart: its verify reads this one (owner-operations.ts).
  const edgeAnchor =
    callBack === undefined
      ? null
      : startAnchorWriter(paths.edgeSelAnchor, async (held) => (await callBack("GET", headPath(held))).body, log);
  const run: GatewayRun = {
    options,
    plan,
    runtimeFolder,
    gatewayLog,
    log,
    runtime,
    reserve,
    bridge,
    edgeLink,
    appDoor,
    workerdConfig,
    workerd,
    record,
    witness,
    anchor,
    edgeAnchor,
    anchorLost,
    recordState: () => recordStateManifest(paths, log),
    state,
  };
  process.on("SIGINT", () => void stopGateway(run, 0));
  process.on("SIGTERM", () => void stopGateway(run, 0));

  try {
    await becomeReady(run);
  } catch (error) {
    reportStartFailure(paths.home, error);
    await stopGateway(run, 1);
    return 1;
  }
  await new Promise(() => undefined);
  return 0;
}
