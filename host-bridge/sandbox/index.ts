// What other bridge modules may use from the sandbox.
export { buildChildEnv, credentialValuesOf, isFloorName, removeUrlLogin, type ChildEnv, type ChildEnvOptions, type ChildKind } from "./child-env.js";
export {
  hiddenCredentialPaths,
  sandboxAvailability,
  sandboxRefusal,
  sandboxUnavailableMessage,
  wrapInSandbox,
  type SandboxAvailability,
  type SandboxedCommand,
  type SandboxLevel,
  type SandboxMode,
  type WrapOptions,
} from "./bubblewrap.js";
export { createLogRelay, type LogRelay, type LogRelayOptions, type RelayLevel, type RelaySink } from "./log-relay.js";
