// What a checked archive would restore into a home, item by item: the plan `personalclaw
// restore <archive>` prints without a mode, and the list a merge works through.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import type { GatewayStateExport, TableExport } from "../../kernel/contracts/durability";
import { FolderGrantSchema } from "../../kernel/contracts/folder-grants";
import { NPM_CLOSURE_CACHE } from "../install/install-dependencies";
import type { CheckedArchive } from "./archive-check";

export interface PlannedAppRestore {
  name: string;
  version: string | null;
  enabled: boolean;
  data_files: number;
  /** Packages its install fetched (venv, node_modules): installed again at the restored gateway's first start. */
  packages: string[];
  /** Where they come from then: the pinned files the archive carries, or the registry (null: none). */
  packages_from: "archive" | "registry" | null;
  /** Already installed in the target home (a merge leaves it unchanged; a replace replaces it). */
  in_home: boolean;
}

export interface RestorePlan {
  created_at: string;
  gateway_version: string;
  log: { head_seq: number; checkpoint_seq: number; public_key: string };
  apps: PlannedAppRestore[];
  secrets: Array<{ name: string; in_home: boolean }>;
  /** Each folder the owner granted an app, and whether that folder exists on this machine. */
  folder_grants: Array<{ app: string; need: string; path: string; access: string; exists: boolean }>;
  settings: boolean;
  counts: { sessions: number; approvals: number; grants: number; log_rows: number };
  skipped: string[];
}

function table(
  state: GatewayStateExport,
  store: keyof GatewayStateExport["stores"],
  name: string,
): TableExport | undefined {
  return state.stores[store].tables.find((t) => t.name === name);
}

/** Each app record the archive holds: name -> {version, enabled}. */
export function archivedRecords(state: GatewayStateExport): Map<string, Record<string, unknown>> {
  const apps = table(state, "AppRegistry", "apps");
  const out = new Map<string, Record<string, unknown>>();
  for (const row of apps?.rows ?? []) {
    const record = JSON.parse(String(row[apps!.columns.indexOf("record")])) as Record<string, unknown>;
    out.set(String(record.name), record);
  }
  return out;
}

function homeSecretNames(home: string): Set<string> {
  const dir = join(home, "secrets", "store");
  return new Set(
    existsSync(dir)
      ? readdirSync(dir)
          .filter((f) => f.endsWith(".json"))
          .map((f) => f.slice(0, -5))
      : [],
  );
}

/** Whether the archive carries the pinned files of every kind of package the app lists. */
function packagesFrom(manifest: CheckedArchive["archive"]["manifest"], app: string, packages: readonly string[]) {
  if (packages.length === 0) return null;
  const carries = (prefix: string) => manifest.parts.some((p) => p.path.startsWith(`apps/${app}/${prefix}`));
  const carried = packages.every((p) =>
    p.startsWith("python:")
      ? carries("wheels/")
      : p.startsWith("npm-closure:")
        ? carries(`node_modules/${NPM_CLOSURE_CACHE}/`)
        : false,
  );
  return carried ? "archive" : "registry";
}

/** The folder grants the archived records hold, each checked against this machine. */
function folderGrantsOf(records: Map<string, Record<string, unknown>>): RestorePlan["folder_grants"] {
  const out: RestorePlan["folder_grants"] = [];
  for (const [app, record] of records) {
    const grants = z.array(FolderGrantSchema).safeParse(record.folderGrants ?? []);
    for (const grant of grants.success ? grants.data : [])
      out.push({
        app,
        need: grant.need,
        path: grant.path,
        access: grant.access,
        exists: statSync(grant.path, { throwIfNoEntry: false })?.isDirectory() === true,
      });
  }
  return out;
}

export function planRestore(home: string, checked: CheckedArchive): RestorePlan {
  const { manifest } = checked.archive;
  const records = archivedRecords(checked.state);
  const inHomeSecrets = homeSecretNames(home);
  const secrets = manifest.parts
    .filter((p) => p.kind === "home-file" && p.path.startsWith("secrets/store/") && p.path.endsWith(".json"))
    .map((p) => p.path.slice("secrets/store/".length, -".json".length))
    .map((name) => ({ name, in_home: inHomeSecrets.has(name) }));
  const rows = (store: keyof GatewayStateExport["stores"], name: string) =>
    table(checked.state, store, name)?.rows.length ?? 0;
  return {
    created_at: manifest.created_at,
    gateway_version: manifest.gateway_version,
    log: {
      head_seq: manifest.log.head.seq,
      checkpoint_seq: manifest.log.checkpoint.seq,
      public_key: manifest.log.checkpoint.public_key,
    },
    apps: manifest.apps.map((app) => {
      const record = records.get(app.name);
      const manifestOf = record?.manifest as { version?: string } | undefined;
      return {
        name: app.name,
        version: manifestOf?.version ?? null,
        enabled: record?.enabled === true,
        data_files: manifest.parts.filter((p) => p.kind === "app-data" && p.app === app.name).length,
        packages: app.packages,
        packages_from: packagesFrom(manifest, app.name, app.packages),
        in_home: existsSync(join(home, "apps", app.name)),
      };
    }),
    secrets,
    folder_grants: folderGrantsOf(records),
    settings: manifest.parts.some((p) => p.path === "config.json"),
    counts: {
      sessions: rows("SessionStore", "sessions"),
      approvals: rows("ApprovalStore", "approvals"),
      grants: rows("ApprovalStore", "grants"),
      log_rows: rows("SecurityLog", "events"),
    },
    skipped: manifest.skipped,
  };
}
