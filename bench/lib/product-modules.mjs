// The bench drives the product's own TypeScript modules: bundled for this run into dist/ (beside
// node_modules, so their imports resolve, and where the CLI bundle finds the launcher) and imported.
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { repoRoot } from "./workerd.mjs";

/**
 * Bundles `exports` (lines such as `export { updateApp } from "./host-bridge/install/update-app.ts";`,
 * paths from the repository root) into dist/<file> and imports it; answers the file and the module.
 */
export async function importProductModules(file, exports) {
  const outfile = join(repoRoot, "dist", file);
  await build({
    stdin: { contents: exports.join("\n"), resolveDir: repoRoot, loader: "ts" },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    outfile,
    logLevel: "warning",
    absWorkingDir: repoRoot,
  });
  return { file: outfile, module: await import(pathToFileURL(outfile).href) };
}
