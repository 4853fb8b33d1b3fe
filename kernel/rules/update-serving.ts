// Whether an app's current version keeps answering while an update's new version passes its
// health gate (docs/design/app-lifecycle.md, "The old version serves through the health gate").
import type { AppManifest } from "../contracts/manifest";

/**
 * True when an update keeps the installed version answering until the new one is healthy: the
 * app is enabled (a disabled one answers nothing before, during or after), has a backend and
 * declares no storage. The sandbox mounts the folder of such an app read-only
 * to every process of it (backend, MCP servers, hooks), so data/ cannot change after the update
 * copied it, and two versions side by side cannot diverge. An app with storage may write data/
 * at any moment: its backend is stopped before the copy and is down until the new one is healthy.
 */
export function oldVersionServesThroughUpdate(installed: {
  enabled: boolean;
  manifest: Pick<AppManifest, "backend" | "permissions">;
}): boolean {
  const { manifest } = installed;
  return installed.enabled && manifest.backend !== undefined && manifest.permissions?.storage !== true;
}
