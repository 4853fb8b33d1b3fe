// The gateway's half of an uninstall, as named steps in one order, least reversible last: the
// app's servers leave mcp.json; its jobs go in one transaction, before its hook, backend and
// files, so none fires at a removed app (UNIN-02); then the bridge runs its hook, stops it and
// removes its files, journal first (host-bridge/operations/app-operations.ts, POST /apps/remove);
// the record, tokens, approvals and grants go last, then its sockets close, the bridge drops the
// journal, and the removal is audited and announced. A refusal before the files go puts the
// servers and jobs back: the app is left whole. A native app is refused: it is disabled instead.
import { appRegistry, approvalStore } from "../../durable/instances";
import { closeAppSockets, emitEvent } from "../../durable/event-hub/emit";
import type { Env } from "../../durable/env";
import type { AppRecord } from "../../kernel/contracts/app-record";
import type { BridgeAnswer } from "../../kernel/contracts/bridge-operations";
import { GatewayError } from "../../kernel/contracts/errors";
import { toolAsker } from "../../kernel/contracts/mcp-tools";
import { readRecord, requireRecord } from "../app-registry";
import { bridgeCall } from "../bridge-client";
import { deregisterMcpServers, registerMcpServers } from "../mcp-registration";
import type { RouteRequest } from "../route-row";
import { sessions } from "../sessions";
import { auditedRefusal } from "./audited-refusal";
import { withTransition } from "./transition-lock";

/** What the owner asked of an uninstall: whether data/ goes too (else it is parked). */
export interface UninstallRequest {
  purgeData: boolean;
  installId: string | undefined;
}

/** Uninstalls an app; all or nothing up to its files. */
export async function uninstallApp(req: RouteRequest<unknown, unknown>, name: string, request: UninstallRequest) {
  const record = await requireRecord(req.env, name);
  if (record.lifecycle === "locked") throw new GatewayError("app_locked", { vars: { name: record.name } });
  const { purgeData } = request;
  return auditedRefusal(req, "app_uninstall_refused", record.name, () =>
    withTransition(req, record.name, "uninstall", async () => {
      // (mcp.json went after the jobs: an unreadable mcp.json left an installed app without them.)
      await deregisterMcpServers(req.env, record.name, record.manifest);
      const { jobsRemoved, removed } = await removeJobsAndFiles(req, record, request);
      const forgotten = await forgetRemovedApp(req.env, record.name, req.now);
      await closeAppSockets(req.env, record.name);
      await bridgeCall(req.env, "POST /apps/transition-commit", { name: record.name }, 60_000);
      await req.audit({
        kind: "app_uninstalled",
        outcome: "allowed",
        subject: record.name,
        detail: {
          purge_data: purgeData,
          uninstall_hook: removed.uninstallHook,
          jobs_removed: jobsRemoved,
          approvals_removed: forgotten.approvals,
          grants_removed: forgotten.grants,
          secrets_taken_back: removed.secretsTakenBack.map((s) => `${s.as}:${s.secret ?? "unknown"}`),
        },
      });
      await emitEvent(req.env, "app.uninstalled", { app: record.name });
      return {
        removed: record.name,
        data_kept: !purgeData,
        secrets_taken_back: removed.secretsTakenBack.map((s) => ({ as: s.as, secret: s.secret })),
      };
    }),
  );
}

/** The jobs go, then the bridge's hook, backend and files; a refusal here puts the servers and jobs back. */
async function removeJobsAndFiles(
  req: RouteRequest<unknown, unknown>,
  record: AppRecord,
  request: UninstallRequest,
): Promise<{ jobsRemoved: number; removed: BridgeAnswer<"POST /apps/remove"> }> {
  try {
    const jobsRemoved = await appRegistry(req.env).removeJobs(record.name);
    const removed = await bridgeCall(
      req.env,
      "POST /apps/remove",
      {
        name: record.name,
        purgeData: request.purgeData,
        manifest: record.manifest,
        version: record.version,
        consentDigest: record.consentDigest,
        installId: request.installId,
      },
      120_000,
    );
    return { jobsRemoved, removed };
  } catch (error) {
    await undoUninstallStart(req.env, record, req.now);
    throw error;
  }
}

/**
 * Puts back what an uninstall took before its files went: the app's jobs (from its record;
 * their past fires are not kept) and, for an enabled app, its servers in mcp.json. Best
 * effort: the refusal that called it is the answer, and a step that fails here is a line.
 */
async function undoUninstallStart(env: Env, record: AppRecord, now: number): Promise<void> {
  await appRegistry(env)
    .reconcileJobs(record.name, now)
    .catch((error: unknown) => console.error("uninstall_undo_jobs_failed", record.name, String(error)));
  if (record.enabled)
    await registerMcpServers(env, record.name, record.manifest).catch((error: unknown) =>
      console.error("uninstall_undo_mcp_failed", record.name, String(error)),
    );
}

/**
 * What the gateway holds in a removed app's name ends with it: its record, its tokens, and the
 * approvals it asked and grants it was given, those its MCP servers' tool calls asked included,
 * so an app installed later under the same name inherits none of them.
 */
export async function forgetRemovedApp(
  env: Env,
  name: string,
  now: number,
): Promise<{ approvals: number; grants: number }> {
  const servers = Object.keys((await readRecord(env, name))?.manifest.mcpServers ?? {});
  await appRegistry(env).remove(name);
  await sessions(env).revokeApp(name, now);
  const forgotten = await approvalStore(env).forgetAsker(`app:${name}`);
  for (const server of servers) {
    const tools = await approvalStore(env).forgetAsker(toolAsker(name, server));
    forgotten.approvals += tools.approvals;
    forgotten.grants += tools.grants;
  }
  return forgotten;
}
