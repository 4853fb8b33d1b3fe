// What a running gateway is made of: the parts `personalclaw start` assembles (start.ts), in one
// record that the steps to readiness (start-ready.ts) and the stop (start-shutdown.ts) share.
import type { Server } from "node:http";
import type { BridgeRuntime } from "../bridge-runtime";
import type { EdgeLink } from "../edge/edge-link";
import type { GatewayLog } from "../gateway-log";
import type { startAnchorWriter } from "../sel-anchor";
import type { startWitnessPoster } from "../sel-witness";
import type { StorageReserve } from "../storage-reserve";
import type { WorkerdSupervisor } from "../supervisor/workerd-supervisor";
import type { GatewayFile } from "./gateway-file";
import type { StartOptions } from "./start";
import type { StartPlan } from "./start-preflight";
import type { WorkerdConfigInput } from "./workerd-config";

export interface GatewayRun {
  options: StartOptions;
  plan: StartPlan;
  runtimeFolder: string;
  gatewayLog: GatewayLog;
  /** Writes a gateway.log line through the text-safety rule. */
  log: (line: string) => void;
  runtime: BridgeRuntime;
  reserve: StorageReserve;
  bridge: { server: Server; port: number };
  /** The bridge's link to its paired edge (start --edge), or null. */
  edgeLink: EdgeLink | null;
  /** The gateway's socket for app backends when the bridge holds it for the edge (start --edge), or null. */
  appDoor: Server | null;
  workerdConfig: WorkerdConfigInput;
  workerd: WorkerdSupervisor;
  /** The gateway.json this start writes (workerd's pid and start time follow each spawn). */
  record: GatewayFile;
  witness: ReturnType<typeof startWitnessPoster>;
  anchor: ReturnType<typeof startAnchorWriter>;
  /** The anchor of the paired edge's log (start --edge), or null. */
  edgeAnchor: ReturnType<typeof startAnchorWriter> | null;
  /** How the security-log anchor was lost before this start, or null. */
  anchorLost: string | null;
  /** Writes the state manifest now (a failure is a log line). */
  recordState: () => void;
  state: {
    /** Set once the stop begins: it runs once, and a workerd spawned meanwhile is not recorded. */
    stopping: boolean;
    manifestTimer: NodeJS.Timeout | null;
  };
}
