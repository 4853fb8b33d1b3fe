// The gateway's half of committing an update, as named steps in one order, used by the update
// request and by the settlement of an update whose request went away (the bridge asks through
// /api/internal/apps/<name>/journal). Every step after the record can run twice: a settlement
// may repeat what a request that died part way had done. The bridge's own commit (dropping the
// rollback copy and the journal) comes after all of them, so until every step has run the
// journal is there for the next settlement to finish.
import { appRegistry } from "../../durable/instances";
import type { AppRecord } from "../../kernel/contracts/app-record";
import type { ReadyUpdate } from "../../kernel/contracts/bridge-operations";
import { AppManifestSchema, type AppManifest } from "../../kernel/contracts/manifest";
import { bridgeCall } from "../bridge-client";
import { emitEvent } from "../../durable/event-hub/emit";
import { registerMcpServers } from "../mcp-registration";
import type { RouteRequest } from "../route-row";

/** The UI's cache-busting revision: the digest's first 16 hex digits, when the app has a UI. */
export function uiRevisionOf(manifest: AppManifest, digest: string): string | null {
  return manifest.ui?.entry ? digest.replace(/^sha256:/, "").slice(0, 16) : null;
}

/** Step 1: the record names the new version (keeping enabled, config and the install date). */
export async function recordUpdate(
  req: RouteRequest<unknown, unknown>,
  current: AppRecord,
  ready: ReadyUpdate,
): Promise<AppManifest> {
  const manifest = AppManifestSchema.parse(ready.manifest);
  await appRegistry(req.env).replace({
    ...current,
    displayName: manifest.displayName ?? manifest.name,
    version: manifest.version,
    source: ready.source,
    manifest,
    consentDigest: ready.digest,
    uiRevision: uiRevisionOf(manifest, ready.digest),
    uiFiles: ready.uiFiles,
    review: ready.review,
  });
  return manifest;
}

/**
 * Steps 2-5, each safe to repeat: the owner's secrets follow the app to its new digest, its MCP
 * servers and jobs are the new manifest's, the app_updated row is written and the event sent.
 */
export async function completeUpdate(
  req: RouteRequest<unknown, unknown>,
  update: {
    name: string;
    enabled: boolean;
    fromDigest: string;
    fromVersion: string;
    previous: AppManifest | undefined;
    manifest: AppManifest;
    ready: Pick<ReadyUpdate, "digest" | "changes" | "venvMoved">;
    /** Set when a settlement, not the request, finishes it. */
    settled: boolean;
  },
): Promise<void> {
  const { name, manifest, ready } = update;
  await bridgeCall(req.env, "POST /secrets/rebind", {
    app: name,
    fromDigest: update.fromDigest,
    toDigest: ready.digest,
    declared: (manifest.secrets ?? []).map((s) => s.name),
  });
  if (update.enabled) await registerMcpServers(req.env, name, manifest, update.previous);
  await appRegistry(req.env).reconcileJobs(name, req.now);
  await req.audit({
    kind: "app_updated",
    outcome: "allowed",
    subject: name,
    detail: {
      from: update.fromVersion,
      to: manifest.version,
      consent: ready.digest,
      changes: ready.changes.map((c) => String(c.field)),
      venv_moved: ready.venvMoved,
      ...(update.settled ? { settled_after_request_ended: true } : {}),
    },
  });
  await emitEvent(req.env, "app.updated", { app: name, version: manifest.version });
}
