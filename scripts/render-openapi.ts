// Renders docs/openapi.json from the route table (npm run docs:openapi); a test compares the
// committed file with a fresh render byte for byte. GET /api/openapi.json answers the same document.
import { packageVersion } from "../host-bridge/cli/package-facts";
import { openApiDocument } from "../workers/routes/openapi";
import { describeRoutes, ROUTES } from "../workers/routes/table";

process.stdout.write(`${JSON.stringify(openApiDocument(describeRoutes(ROUTES), packageVersion()), null, 2)}\n`);
