// The gateway worker: the Hono app built from the route table, and the Durable Object classes.
import { buildGateway } from "./routes/pipeline";
import { ROUTES } from "./routes/table";

export { SessionStore } from "../durable/session-store/index";
export { AppRegistry } from "../durable/app-registry/index";
export { SecurityLog } from "../durable/security-log/index";
export { ApprovalStore } from "../durable/approval-store/index";
export { EventHub } from "../durable/event-hub/index";

export default buildGateway(ROUTES);
