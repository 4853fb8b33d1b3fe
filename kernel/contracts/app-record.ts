// The installed-app record: the one record of each install, held by AppRegistry. The host
// bridge keeps the bytes; nothing else keeps a second record.
import { z } from "zod";
import type { AppManifest } from "./manifest";
import type { FolderGrant } from "./folder-grants";

export const BackendStatusSchema = z.object({
  running: z.boolean(),
  healthy: z.boolean(),
  pid: z.number().int().nullable(),
  /** The loopback TCP port of an unconfined backend (sandbox.mode "off"); null when confined. */
  port: z.number().int().nullable(),
  /** The socket slot a confined backend is reached through (backend-slots.ts); null when unconfined. */
  slot: z.number().int().min(0).nullable().optional(),
  startedAt: z.string().nullable(),
  restarts: z.number().int(),
  lastLines: z.array(z.string()),
  exit: z
    .object({
      code: z.number().int().nullable(),
      signal: z.string().nullable(),
      at: z.string(),
      /** True when it ended because it was asked to (a stop, restart or update): SIGTERM's 143 is then no crash. */
      requested: z.boolean().optional(),
    })
    .nullable(),
  reason: z.string().nullable().optional(),
});
export type BackendStatus = z.infer<typeof BackendStatusSchema>;

export type AppOrigin = "builtin" | "local";
export type AppLifecycle = "gateway" | "locked";

export interface AppRecord {
  name: string;
  displayName: string;
  version: string;
  origin: AppOrigin;
  source: string;
  resources: "gateway";
  lifecycle: AppLifecycle;
  enabled: boolean;
  manifest: AppManifest;
  consentDigest: string;
  installedAt: string;
  uiRevision: string | null;
  /**
   * The UI files the bridge listed from the installed copy just before it moved into place:
   * path inside the UI folder -> sha256 hex. Only these files, with exactly these bytes, are served.
   */
  uiFiles?: Record<string, string>;
  /**
   * The review the owner consented to (its digest is consentDigest). An update compares its new
   * review with this one to say what changes; a record written before reviews were kept has none,
   * so its first update always asks for consent.
   */
  review?: Record<string, unknown>;
  /** The folders the owner granted to the app's declared needs (folder-grants.ts); only the owner changes them. */
  folderGrants?: FolderGrant[];
}

/** The UI file list as the bridge answers it: names inside the UI folder, sha256 hex values. */
export const UiFilesSchema = z.record(z.string().min(1).max(1024), z.string().regex(/^[0-9a-f]{64}$/));

/** What `GET /api/apps` shows of a record: nativeness from the record's origin, never the manifest. */
export const AppViewSchema = z.strictObject({
  name: z.string(),
  displayName: z.string(),
  version: z.string(),
  origin: z.enum(["builtin", "local"]),
  resources: z.literal("gateway"),
  lifecycle: z.enum(["gateway", "locked"]),
  enabled: z.boolean(),
  native: z.boolean(),
  requires: z.array(z.object({ name: z.string(), why: z.string(), how: z.string() })),
  consentDigest: z.string(),
  installedAt: z.string(),
  hasBackend: z.boolean(),
  /**
   * True when an update keeps this version answering until the new one passes its health check
   * (enabled, a backend and no storage: kernel/rules/update-serving.ts); false when its backend is
   * down from the data copy until then, and for a disabled app, which answers nothing meanwhile.
   */
  updateKeepsServing: z.boolean(),
  ui: z.object({ entry: z.string(), revision: z.string().nullable() }).nullable(),
  backend: BackendStatusSchema.nullable(),
  /**
   * Each folder need and whether the owner granted a folder to it, at what access. Not the
   * folder's host path: an app reads its own row, and it learns of a grant only /folders/<need>.
   * The owner reads the paths at GET /api/apps/:name/folders.
   */
  folders: z.array(
    z.strictObject({ need: z.string(), granted: z.boolean(), access: z.enum(["read", "read-write"]).nullable() }),
  ),
});
export type AppView = z.infer<typeof AppViewSchema>;

/** The proxy's view of an app: read on every proxied request, so it comes from memory. */
export interface ProxyTarget {
  enabled: boolean;
  port: number | null;
  slot: number | null;
  healthy: boolean;
  secret: string | null;
  healthPath: string;
  /** How long the proxy waits for the backend's answer to start (manifest override, capped). */
  responseTimeoutMs: number;
  /** Changes whenever the app's tokens may have been revoked; a cached app token is kept only while it stays the same. */
  tokenEpoch: string;
}

/** An app's grants as the permission gate reads them; a grant that is not a list is null (denies). */
export interface AppGrants {
  enabled: boolean;
  api: string[] | null;
  appMessaging: string[] | null;
  /** permissions.events: the live events its sockets may hear (null when it is not a list, so none). */
  events?: string[] | null;
  /** permissions.approvals is exactly true: the app may raise approvals. */
  approvals: boolean;
  /** permissions.config: the owner settings it may read and write (GRANT-01). */
  config: { read: string[]; write: string[] };
}
