// The gateway worker: the Hono app built from the route table, and the Durable Object classes.
import { buildGateway } from "./routes/pipeline";
import { ROUTES } from "./routes/table";

export * from "./durable-objects";

export default buildGateway(ROUTES);
