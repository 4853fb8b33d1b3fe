// The gateway's half of an update, as named steps in one order; the bridge's half
// (host-bridge/install/update-app.ts) stages and reviews the new folder, swaps it in keeping
// the old one as its rollback, and keeps it only once its backend passed the health gate. Then
// the gateway records the new version, asking the bridge to put the old one back when it
// cannot; completes the commit (secrets, MCP servers, jobs, audit, event: update-commit.ts);
// and last the bridge drops the rollback copy and its journal. A native app is not updated.
import { appRegistry } from "../../durable/instances";
import type { Env } from "../../durable/env";
import type { AppRecord } from "../../kernel/contracts/app-record";
import type { BridgeAnswer } from "../../kernel/contracts/bridge-operations";
import { GatewayError } from "../../kernel/contracts/errors";
import type { AppManifest } from "../../kernel/contracts/manifest";
import { readRecord, requireRecord } from "../app-registry";
import { bridgeCall } from "../bridge-client";
import type { RouteRequest } from "../route-row";
import { auditedRefusal } from "./audited-refusal";
import { injectedRecordFailure, requireAbsolute } from "./install";
import { withTransition } from "./transition-lock";
import { completeUpdate, recordUpdate } from "./update-commit";

/** What the owner asked to update an app from: a folder, and the digest consented to when one is needed. */
export interface UpdateRequest {
  source: string;
  consent: string | undefined;
  installId: string | undefined;
}

type UpdatedApp = BridgeAnswer<"POST /apps/update">;

/** The record's consented review, as the bridge compares an update with it. */
function installedCopy(record: AppRecord) {
  return {
    manifest: record.manifest,
    review: record.review ?? null,
    digest: record.consentDigest,
    enabled: record.enabled,
  };
}

/** Updates an installed app from a folder; on any failure the old version stays (or comes back). */
export async function updateApp(req: RouteRequest<unknown, unknown>, name: string, request: UpdateRequest) {
  requireAbsolute(request.source);
  const record = await requireRecord(req.env, name);
  return auditedRefusal(req, "app_update_refused", record.name, () =>
    withTransition(req, record.name, "update", async () => {
      if (record.lifecycle === "locked") throw new GatewayError("app_update_locked", { vars: { name: record.name } });
      const current = (await readRecord(req.env, record.name)) ?? record;
      const updated = await bridgeUpdate(req.env, current, request);
      const manifest = await recordUpdateOrUndo(req, current, request.source, updated);
      // Every step of the commit before the bridge drops the journal: a crash between any two
      // leaves it, and the settlement that follows finishes the rest (update-commit.ts).
      await completeUpdate(req, {
        name: current.name,
        enabled: current.enabled,
        fromDigest: current.consentDigest,
        fromVersion: current.version,
        previous: current.manifest,
        manifest,
        ready: updated,
        settled: false,
      });
      await bridgeCall(req.env, "POST /apps/transition-commit", { name: current.name }, 120_000);
      return {
        app: await appRegistry(req.env).get(current.name),
        digest: updated.digest,
        changes: updated.changes,
      };
    }),
  );
}

/** Step 1, the bridge: stage, review against the consented copy, swap, health gate (with its journal). */
function bridgeUpdate(env: Env, current: AppRecord, request: UpdateRequest): Promise<UpdatedApp> {
  return bridgeCall(
    env,
    "POST /apps/update",
    {
      name: current.name,
      source: request.source,
      consent: request.consent,
      installed: installedCopy(current),
      installId: request.installId,
    },
    900_000,
  );
}

/** Step 2, the record; if it cannot be written, the bridge puts the old version back. */
async function recordUpdateOrUndo(
  req: RouteRequest<unknown, unknown>,
  current: AppRecord,
  source: string,
  updated: UpdatedApp,
): Promise<AppManifest> {
  try {
    injectedRecordFailure(req);
    return await recordUpdate(req, current, { ...updated, source, previousManifest: current.manifest });
  } catch (error) {
    await bridgeCall(
      req.env,
      "POST /apps/update-undo",
      { name: current.name, installed: installedCopy(current) },
      120_000,
    );
    throw error instanceof GatewayError
      ? error
      : new GatewayError("update_step_failed", {
          vars: {
            name: current.name,
            step: "record",
            reason: error instanceof Error ? error.message : String(error),
          },
          detail: { step: "record" },
        });
  }
}
