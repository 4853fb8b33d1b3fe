// The gateway worker of the test build: the product's route table plus the rows only the
// end-to-end suites and the bench reach. The shipped entry (workers/index.ts) never sees them.
import { buildGateway } from "../../workers/routes/pipeline";
import { ROUTES } from "../../workers/routes/table";
import { backendDoorEntrypoint } from "../../workers/guards/backend-door";
import { linkDoorEntrypoint } from "../../workers/guards/link-door";
import { testRoutes } from "./test-routes";

export * from "../../workers/durable-objects";

const gateway = buildGateway([...ROUTES, ...testRoutes]);

export default gateway;

/** What the `backends` socket (app backends' door) delivers to, as in the shipped entry. */
export const backendDoor = backendDoorEntrypoint(gateway);

/** What LINK_DOOR (a paired bridge's calls back, edge mode) delivers to, as in the shipped entry. */
export const linkDoor = linkDoorEntrypoint(gateway);
