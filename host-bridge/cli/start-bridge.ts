// The host bridge inside `personalclaw start`: its runtime folder (where the gateway's and the
// backends' sockets live), the runtime that does the bridge's work, the disk space kept back
// for the gateway's own state, and its internal API on loopback.
import type { Server } from "node:http";
import { BridgeRuntime } from "../bridge-runtime";
import { clearGatewaySocket, runtimeDir, type HomePaths } from "../home";
import { startBridgeServer } from "../server";
import { parentEnvironment, type Settings } from "../settings";
import { keepStorageReserve, type StorageReserve } from "../storage-reserve";
import type { CallGateway } from "../bridge-contract";
import { callGateway } from "./gateway-client";
import { packageRoot, packageVersion } from "./package-facts";
import type { StartPlan } from "./start-preflight";

/** The bridge's runtime folder, cleared of a dead workerd's gateway socket; null when the start is refused (said on stderr). */
export function claimRuntimeFolder(paths: HomePaths): string | null {
  try {
    const folder = runtimeDir(paths.home, parentEnvironment().XDG_RUNTIME_DIR);
    clearGatewaySocket(folder);
    return folder;
  } catch (error) {
    process.stderr.write(
      `personalclaw: refusing to start: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    return null;
  }
}

/**
 * Prepares the bridge's runtime, keeps the storage reserve and starts the internal API the worker
 * calls. Its calls back go to this machine's gateway, or to `callBack` when given (the edge's link).
 */
export async function startBridge(
  plan: StartPlan,
  settings: Settings,
  runtimeFolder: string,
  secret: string,
  log: (line: string) => void,
  callBack?: CallGateway,
): Promise<{ runtime: BridgeRuntime; reserve: StorageReserve; bridge: { server: Server; port: number } }> {
  const { paths } = plan;
  const runtime = new BridgeRuntime({
    paths,
    runtimeDir: runtimeFolder,
    gatewayPort: plan.port,
    packageRoot,
    version: packageVersion(),
    config: plan.config,
    parentEnv: parentEnvironment(),
    skipBackends: settings.skipAppBackends,
    hookTimeoutSeconds: settings.hookTimeoutSeconds,
    log,
    callGateway: callBack ?? ((method, path, body) => callGateway(paths.home, "bridge", method, path, body)),
  });
  await runtime.prepare();
  // Disk space kept back for the gateway's own state, handed to it when the disk fills (storage-reserve.ts).
  const reserve = keepStorageReserve({
    home: paths.home,
    log,
    onReleased: (available) =>
      void runtime.reporting.audit({
        kind: "storage_reserve_released",
        outcome: "info",
        subject: "disk",
        detail: { available_bytes: available },
      }),
  });
  const bridge = await startBridgeServer(secret, runtime.operations(), log, (code, subject, group) =>
    runtime.auditRefusal(code, subject, group),
  );
  return { runtime, reserve, bridge };
}
