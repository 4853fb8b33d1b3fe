// The gateway's Durable Object classes, as every worker bundle that serves them exports them,
// and what the worker hands them: AppRegistry fires due jobs through the proxy's signed send.
import { provideJobFirer } from "../durable/app-registry/job-firer";
import { fireJob } from "./proxy/fire-job";

provideJobFirer(fireJob);

export { SessionStore } from "../durable/session-store/index";
export { AppRegistry } from "../durable/app-registry/index";
export { SecurityLog } from "../durable/security-log/security-log";
export { ApprovalStore } from "../durable/approval-store/index";
export { EventHub } from "../durable/event-hub/index";
export { BridgeLink } from "../durable/bridge-link/index";
