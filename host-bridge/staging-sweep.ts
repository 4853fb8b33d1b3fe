// At start, the staging files a killed write left behind (writePrivateFile: `<target>.<12
// hex>.tmp`, made and then never renamed) are removed from every folder the bridge writes its
// own files in. Left there they were permanent: each kill inside a secret or settings write
// added one, and a sealed copy among them outlived the secret it was made from.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { APP_NAME_PATTERN } from "../kernel/rules/app-name";
import { homePaths } from "./home";
import { sweepStagingFiles } from "./private-file";
import { secretStorePaths } from "./secrets/secret-store";
import { runRecordDir } from "./supervisor/run-records";

/** The app-named folders in `dir` (a folder of one per app), or none. */
function appFolders(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && APP_NAME_PATTERN.test(entry.name))
      .map((entry) => join(dir, entry.name));
  } catch {
    return [];
  }
}

/** Sweeps the home's staging files; answers the paths removed (for the gateway log). */
export function sweepHomeStagingFiles(home: string): string[] {
  const paths = homePaths(home);
  const secrets = secretStorePaths(home);
  const mcpRuns = join(paths.run, "mcp");
  // Folders only the bridge writes: any staging file in them is one of its own.
  const own = [home, paths.run, runRecordDir(home), mcpRuns, ...appFolders(mcpRuns), secrets.store];
  own.push(...appFolders(secrets.apps));
  const removed = own.flatMap((dir) => sweepStagingFiles(dir).map((name) => join(dir, name)));
  // An app's folder holds the app's own bytes: only the staging files of its `.app_secret`.
  for (const dir of appFolders(paths.apps))
    removed.push(...sweepStagingFiles(dir, [".app_secret"]).map((name) => join(dir, name)));
  return removed;
}
