// How `personalclaw start` ends (Ctrl-C, SIGTERM or a failed start): once only, within 10 s
// whatever hangs. Backends stop first, then the stop is written to the security log and the
// anchor, then workerd, then the bridge; gateway.json and the sockets are removed last.
import { clearGatewaySocket, clearSlotSockets, releaseRuntimeDir } from "../home";
import { removeGatewayFile } from "./gateway-file";
import type { GatewayRun } from "./gateway-run";
import { appendSecurityRow } from "./lifecycle-row";

/** Past this the process exits whatever the stop still waits for. */
const HARD_STOP_MS = 9_500;

/** Stops the whole gateway and exits the process with exitCode; a second call does nothing. */
export async function stopGateway(run: GatewayRun, exitCode: number): Promise<void> {
  if (run.state.stopping) return;
  run.state.stopping = true;
  const { paths, port } = run.plan;
  const { log } = run;
  const hardStop = setTimeout(() => process.exit(exitCode), HARD_STOP_MS);
  try {
    if (run.state.manifestTimer) clearInterval(run.state.manifestTimer);
    run.reserve.stop();
    await run.runtime
      .stopAll()
      .catch((error) => log(`stopping backends: ${error instanceof Error ? error.message : String(error)}`));
    // After the backends: under --edge their stops are reported to the edge over the link.
    await run.edgeAnchor?.flush().catch(() => undefined);
    run.edgeAnchor?.stop();
    run.edgeLink?.stop();
    run.appDoor?.close();
    await appendSecurityRow(paths.home, "gateway_stopped", { port }).catch(() => undefined);
    await run.anchor.flush().catch(() => undefined);
  } finally {
    run.anchor.stop();
    run.witness.stop();
    await run.workerd.stop();
    if (run.record.workerdPid !== null) run.recordState();
    run.bridge.server.close();
    run.bridge.server.closeAllConnections();
    removeGatewayFile(paths);
    clearGatewaySocket(run.runtimeFolder);
    clearSlotSockets(run.runtimeFolder);
    releaseRuntimeDir(run.runtimeFolder);
    run.gatewayLog.close();
    clearTimeout(hardStop);
    process.exit(exitCode);
  }
}
