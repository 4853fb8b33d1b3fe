// What other bridge modules may use from the supervisor.
export {
  BackendSupervisor,
  type BackendExit,
  type BackendSpec,
  type SupervisedBackendStatus,
  type BackendSupervisorOptions,
  type StartResult,
  type StopResult,
  type SupervisorLogLevel,
} from "./backend-supervisor.js";
export { reapOrphans, orphanVerdict, type ReapReport } from "./reap-orphans.js";
export { isAcceptableHealthPath, probeHealth } from "./health-probe.js";
export { closeInheritedFds, spawnChild } from "./spawn-child.js";
export { generateAppSecret, writeAppSecret, type AppSecretResult } from "./app-secret.js";
