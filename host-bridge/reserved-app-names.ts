// The app names the route table reserves (first literal segments under /api/apps/), as the
// build derived them into dist/reserved-app-names.json: the bridge never loads worker code.
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** Reads the reserved names from the package's dist/; `packageRoot` is the package folder. */
export function reservedAppNames(packageRoot: string): ReadonlySet<string> {
  return new Set(JSON.parse(readFileSync(join(packageRoot, "dist", "reserved-app-names.json"), "utf8")) as string[]);
}
