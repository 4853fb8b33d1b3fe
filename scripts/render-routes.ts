// Renders docs/api-routes.md from the route table (npm run docs:routes); a test compares
// the committed file with a fresh render byte for byte.
import { renderRoutesMarkdown } from "../workers/routes/render-markdown";
import { ROUTES } from "../workers/routes/table";

process.stdout.write(renderRoutesMarkdown(ROUTES));
