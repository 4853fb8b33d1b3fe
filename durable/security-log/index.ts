// What others may use of the security log.
export { SecurityLog } from "./security-log";
export { GENESIS_PREV_MAC } from "./chain-mac";
export { ROTATED_KIND, SEGMENT_REMOVED_KIND } from "./verify-chain";
export { SEL_LIMITS } from "./log-core";
