// workerd inside `personalclaw start`: the config it serves from, its supervision (restarted
// with backoff, tied to this process by setpriv, its console relayed into gateway.log with the
// gateway's keys masked), and the wait until it answers. No credential is sent to the port until
// the process listening on it is provably workerd's own.
import { realpathSync } from "node:fs";
import type { ResultPromise } from "execa";
import type { BridgeRuntime } from "../bridge-runtime";
import { clearGatewaySocket } from "../home";
import { sessionTtlInForce } from "../owner-config";
import { openGatewayDoor } from "../sandbox/child-identity";
import { createLogRelay } from "../sandbox/log-relay";
import { parentEnvironment, type Settings } from "../settings";
import { identityOf } from "../supervisor/process-identity";
import { WorkerdSupervisor } from "../supervisor/workerd-supervisor";
import { callGateway } from "./gateway-client";
import { thisProcessIdentity, writeGatewayFile, type GatewayFile } from "./gateway-file";
import { appendSecurityRow } from "./lifecycle-row";
import { packageVersion, webFolder, workerBundle, workerdBinary } from "./package-facts";
import { isPortListenerOwnedBy } from "./port-owner";
import type { StartPlan } from "./start-preflight";
import type { WorkerdConfigInput } from "./workerd-config";

/**
 * Waits until workerd listens on `port` and answers. No credential is sent until the listening
 * socket is provably workerd's own: a program that holds the port never receives one.
 */
export async function waitForGateway(
  home: string,
  workerd: ResultPromise,
  port: number,
  deadlineMs: number,
): Promise<void> {
  const until = Date.now() + deadlineMs;
  let exited = false;
  workerd.finally(() => {
    exited = true;
  });
  while (Date.now() < until) {
    if (exited) throw new Error(`workerd exited during start; see logs/gateway.log`);
    if (workerd.pid !== undefined && isPortListenerOwnedBy(workerd.pid, port)) {
      try {
        const answer = await callGateway(home, "start", "GET", "/api/status");
        if (answer.status === 200) return;
      } catch {
        // Not answering yet.
      }
    }
    await new Promise((r) => setTimeout(r, 40));
  }
  throw new Error(`the gateway did not answer within ${deadlineMs / 1000} s; see logs/gateway.log`);
}

/**
 * What workerd is configured with. The bindings hold the internal credential, and at a home's
 * first start the security log's seed: the config is rewritten without it once the log has taken it.
 */
export function workerdConfigFor(
  plan: StartPlan,
  settings: Settings,
  run: { runtimeFolder: string; secret: string; bridgePort: number; startedAt: string; edge?: boolean },
): WorkerdConfigInput {
  const { paths, config, bindHost, port } = plan;
  return {
    configPath: paths.workerdConfig,
    workerBundle,
    stateDir: paths.state,
    webDir: webFolder,
    appsDir: paths.apps,
    toolStampDir: paths.toolStamp,
    runtimeDir: run.runtimeFolder,
    listen: `${bindHost.includes(":") ? `[${bindHost}]` : bindHost}:${port}`,
    // Under --edge the backends' calls go to the edge (host-bridge/edge/app-door.ts), not to this workerd.
    servesBackends: !run.edge,
    bindings: {
      INTERNAL_SECRET: run.secret,
      BRIDGE_URL: `http://127.0.0.1:${run.bridgePort}`,
      SEL_KEY: plan.selKey.keyHex,
      GATEWAY_PORT: String(port),
      AUTH_MODE_REQUESTED: settings.authModeRequested,
      ALLOWED_HOSTS: settings.allowedHosts,
      // Edge mode is off on this machine: the Host, Origin and client address rules stay loopback's.
      PERSONALCLAW_PUBLIC_ORIGIN: "",
      // Pairing is an edge worker's: with no public origin the pairing route refuses every request.
      PERSONALCLAW_PAIRING_SECRET: "",
      VERSION: packageVersion(),
      STARTED_AT: run.startedAt,
      SESSION_TTL_S: String(sessionTtlInForce(config).seconds),
      PROXY_TIMEOUT_S: String(config.proxy.response_timeout_s),
      SEL_RETENTION_DAYS: String(config.logs.security_retention_days),
    },
  };
}

/**
 * workerd under supervision, not yet spawned. Each spawn is recorded in gateway.json (unless the
 * stop began); after a restart the gateway door opens again once it answers, the requests that
 * died with the old process are settled, the restart is a security-log row and every backend is
 * reported again.
 */
export function superviseWorkerd(opts: {
  plan: StartPlan;
  runtimeFolder: string;
  secret: string;
  setpriv: string | null;
  startedAt: string;
  bridgePort: number;
  runtime: BridgeRuntime;
  log: (line: string) => void;
  isStopping: () => boolean;
  /** Whether workerd listens on the backends' socket (false under --edge, where the bridge holds it). */
  servesBackends: boolean;
}): { workerd: WorkerdSupervisor; record: GatewayFile } {
  const { plan, runtimeFolder, log, runtime } = opts;
  const { paths, port } = plan;
  const binary = workerdBinary();
  const record: GatewayFile = {
    ...thisProcessIdentity(),
    port,
    url: `http://127.0.0.1:${port}/`,
    bridgePort: opts.bridgePort,
    startedAt: opts.startedAt,
    workerdPid: null,
    workerdStartTime: null,
    workerdExe: realpathSync(binary),
  };
  // workerd's console can quote request data (an internal error's stack): relayed like a child's output.
  const workerdLog = createLogRelay({
    tag: "workerd",
    sink: (level, line) => log(`${level} ${line}`),
    secrets: [opts.secret, plan.selKey.keyHex],
    burst: 1000,
    perSecond: 20,
  });
  const workerd: WorkerdSupervisor = new WorkerdSupervisor({
    binary,
    args: ["serve", paths.workerdConfig, "--experimental"],
    env: { PATH: parentEnvironment().PATH ?? "/usr/bin:/bin" },
    setpriv: opts.setpriv,
    log,
    // A dead workerd's socket would refuse its successor's bind; the bridge's own (--edge) stays.
    beforeSpawn: () => (opts.servesBackends ? clearGatewaySocket(runtimeFolder) : undefined),
    onSpawn: (child) => {
      if (child.stdout) workerdLog.attach(child.stdout, "info");
      if (child.stderr) workerdLog.attach(child.stderr, "warning");
      const pid = child.pid ?? null;
      record.workerdPid = pid;
      record.workerdStartTime = pid === null ? null : (identityOf(pid)?.startTime ?? null);
      if (!opts.isStopping()) writeGatewayFile(paths, record);
    },
    onRestarted: async (attempt, exit) => {
      const restartedAt = Date.now();
      const child = workerd.current()!;
      await waitForGateway(paths.home, child, port, 15_000);
      openGatewayDoor(runtimeFolder);
      // What the requests that died with workerd left half done is settled now, not at the next start.
      void runtime.settlement.afterGatewayRestart(restartedAt);
      log(`info workerd restarted (restart ${attempt}) after ${exit.signal ?? `exit ${exit.exitCode}`}`);
      await appendSecurityRow(paths.home, "workerd_restarted", {
        restart: attempt,
        signal: exit.signal ?? null,
        exit_code: exit.exitCode ?? null,
      }).catch(() => undefined);
      await runtime.reportAllBackends();
    },
  });
  return { workerd, record };
}
