// What the installed package is and where its parts lie: the one place every command learns the
// version, the built bundles and the shipped templates, so a moved file is changed here only.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execaSync } from "execa";

import { packageRoot } from "../package-root";

export { packageRoot };
const require = createRequire(import.meta.url);

/** The package's own version (package.json). */
export function packageVersion(): string {
  return JSON.parse(readFileSync(join(packageRoot, "package.json"), "utf8")).version;
}

/** The workerd binary that wrangler's pinned workerd package ships. */
export function workerdBinary(): string {
  return require.resolve("workerd/bin/workerd");
}

/** workerd's own version line ("workerd 2026-..."), or null when the binary cannot say. */
export function workerdVersion(): string | null {
  try {
    const answer = execaSync(workerdBinary(), ["--version"], { reject: false, timeout: 5_000 });
    return answer.exitCode === 0 ? answer.stdout.trim() : null;
  } catch {
    return null;
  }
}

/** The worker bundle built beside this CLI bundle: dist/worker.js, or the test build's in dist/test/. */
export const workerBundle = fileURLToPath(new URL("./worker.js", import.meta.url));
/** The dashboard's static files. */
export const webFolder = join(packageRoot, "web");
/** The folders `apps new` copies an app from, one per backend kind. */
export const appTemplatesFolder = join(packageRoot, "host-bridge", "cli", "templates");
/** The Node SDK an app vendors, and the Python verifier module an app carries beside its server. */
export const nodeSdkFolder = join(packageRoot, "apps", "sdk", "node");
export const pythonVerifierFile = join(packageRoot, "apps", "sdk", "python", "personalclaw_verify.py");
