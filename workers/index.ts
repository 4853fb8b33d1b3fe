// The gateway worker: the Hono app built from the route table, and the Durable Object classes.
import { buildGateway } from "./routes/pipeline";
import { ROUTES } from "./routes/table";
import { backendDoorEntrypoint } from "./guards/backend-door";
import { linkDoorEntrypoint } from "./guards/link-door";

export * from "./durable-objects";

const gateway = buildGateway(ROUTES);

export default gateway;

/** What the `backends` socket (app backends' door) delivers to: workers/guards/backend-door.ts. */
export const backendDoor = backendDoorEntrypoint(gateway);

/** What LINK_DOOR (a paired bridge's calls back, edge mode) delivers to: workers/guards/link-door.ts. */
export const linkDoor = linkDoorEntrypoint(gateway);
