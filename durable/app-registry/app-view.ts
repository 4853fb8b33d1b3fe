// What AppRegistry answers about one record: the dashboard's view and the permission gate's
// grants, both derived from the record alone (nativeness from its origin, never the manifest).
import type { AppGrants, AppRecord, AppView, BackendStatus } from "../../kernel/contracts/app-record";
import { configGrantPaths } from "../../kernel/contracts/manifest";
import { effectiveGrants } from "../../kernel/contracts/folder-grants";
import { oldVersionServesThroughUpdate } from "../../kernel/rules/update-serving";

/** The record as `GET /api/apps` shows it, with the backend the bridge last reported. */
export function appView(record: AppRecord, backend: BackendStatus | undefined): AppView {
  const manifest = record.manifest;
  const granted = effectiveGrants(manifest.permissions?.folders, record.folderGrants);
  return {
    name: record.name,
    displayName: record.displayName,
    version: record.version,
    origin: record.origin,
    resources: record.resources,
    lifecycle: record.lifecycle,
    enabled: record.enabled,
    native: record.origin === "builtin",
    requires: manifest.requires ?? [],
    consentDigest: record.consentDigest,
    installedAt: record.installedAt,
    hasBackend: Boolean(manifest.backend),
    updateKeepsServing: oldVersionServesThroughUpdate({ enabled: record.enabled, manifest }),
    ui: manifest.ui?.entry ? { entry: manifest.ui.entry, revision: record.uiRevision } : null,
    backend: manifest.backend ? (backend ?? null) : null,
    folders: (manifest.permissions?.folders ?? []).map((need) => {
      const grant = granted.find((g) => g.need === need.name);
      return { need: need.name, granted: grant !== undefined, access: grant?.access ?? null };
    }),
  };
}

/** What the app permission gate needs of an app. */
export function appGrants(record: AppRecord): AppGrants {
  const permissions = record.manifest.permissions ?? {};
  // A grant that is not a list is no grant: iterating "*" as characters would widen it (PERM-02).
  const list = (value: unknown) =>
    Array.isArray(value) && value.every((item) => typeof item === "string") ? [...value] : null;
  return {
    enabled: record.enabled,
    api: list(permissions.api),
    appMessaging: list(permissions.appMessaging),
    events: list(permissions.events),
    approvals: permissions.approvals === true,
    config: configGrantPaths(permissions.config),
  };
}
