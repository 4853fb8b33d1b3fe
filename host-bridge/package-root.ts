// The package folder, found from wherever this code runs: its source module (tests), the
// shipped bundle in dist/ or the test build in dist/test/.
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

function nearestPackageFolder(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

/** The folder holding package.json, web/, apps/native/ and dist/. */
export const packageRoot = nearestPackageFolder(dirname(fileURLToPath(import.meta.url)));
