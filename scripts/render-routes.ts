// Renders docs/api-routes.md from the route table (npm run docs:routes); a test compares
// the committed file with a fresh render byte for byte.
import { renderRoutesMarkdown } from "../workers/routes/render-markdown";
import { reservedAppNames, ROUTES } from "../workers/routes/table";

// `--reserved-app-names` prints the names the route table reserves (the build writes them to
// dist/reserved-app-names.json for the host bridge, which does not load the worker's code).
if (process.argv.includes("--reserved-app-names"))
  process.stdout.write(`${JSON.stringify([...reservedAppNames(ROUTES)].sort())}\n`);
else process.stdout.write(renderRoutesMarkdown(ROUTES));
