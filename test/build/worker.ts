// The gateway worker of the test build: the product's route table plus the rows only the
// end-to-end suites and the bench reach. The shipped entry (workers/index.ts) never sees them.
import { buildGateway } from "../../workers/routes/pipeline";
import { ROUTES } from "../../workers/routes/table";
import { testRoutes } from "./test-routes";

export * from "../../workers/durable-objects";

export default buildGateway([...ROUTES, ...testRoutes]);
