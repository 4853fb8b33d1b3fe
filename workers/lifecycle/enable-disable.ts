// Enable and disable of an installed app, each all or nothing with its steps least reversible
// last (docs/design/app-lifecycle.md). Enable: the app's MCP servers reach mcp.json (nothing
// runs yet), its backend starts, the record says enabled; a failed step undoes the ones before
// it, so a disabled app stays wholly off. Disable: the servers leave mcp.json, the backend
// stops (one that cannot be stopped puts them back, so the app stays wholly on), then the
// record, the jobs, the app's tokens and sockets. Each is audited, and announced when it
// changed something.
import { appRegistry } from "../../durable/instances";
import { closeAppSockets, emitEvent } from "../../durable/event-hub/emit";
import type { Env } from "../../durable/env";
import type { AppRecord } from "../../kernel/contracts/app-record";
import type { AppManifest } from "../../kernel/contracts/manifest";
import { readRecord, requireRecord } from "../app-registry";
import { bridgeCall } from "../bridge-client";
import { deregisterMcpServers, registerMcpServers } from "../mcp-registration";
import type { RouteRequest } from "../route-row";
import { sessions } from "../sessions";
import { auditedRefusal } from "./audited-refusal";
import { withTransition } from "./transition-lock";

/** Starts an app's backend; the consent digest is what its assigned secrets open under. */
export async function startBackend(env: Env, name: string, manifest: AppManifest, digest: string): Promise<void> {
  if (!manifest.backend) return;
  await bridgeCall(env, "POST /backends/start", { name, manifest, digest }, 60_000);
}

/** Turns an app on; on an enabled app it changes nothing and reports the running backend again. */
export async function enableApp(req: RouteRequest<unknown, unknown>, name: string) {
  const record = await requireRecord(req.env, name);
  return auditedRefusal(req, "app_enable_refused", record.name, () =>
    withTransition(req, record.name, "enable", async () => {
      const current = (await readRecord(req.env, record.name)) ?? record;
      const changed = !current.enabled;
      // Least reversible last: mcp.json (nothing runs yet), the backend, the record.
      await registerMcpServers(req.env, current.name, current.manifest);
      try {
        await startBackend(req.env, current.name, current.manifest, current.consentDigest);
        if (changed) await appRegistry(req.env).setEnabled(current.name, true);
      } catch (error) {
        if (changed) await undoEnable(req.env, current);
        throw error;
      }
      await appRegistry(req.env).reconcileJobs(current.name, req.now);
      await req.audit({ kind: "app_enabled", outcome: "allowed", subject: current.name, detail: { changed } });
      if (changed) await emitEvent(req.env, "app.enabled", { app: current.name });
      return { app: await appRegistry(req.env).get(current.name), changed };
    }),
  );
}

/** Undoes a failed enable of a disabled app: its backend stopped, its servers out of mcp.json (each best effort). */
async function undoEnable(env: Env, app: AppRecord): Promise<void> {
  if (app.manifest.backend)
    await bridgeCall(env, "POST /backends/stop", { name: app.name }, 30_000).catch((error: unknown) =>
      console.error("enable_undo", app.name, "backend stop failed", error instanceof Error ? error.message : error),
    );
  await deregisterMcpServers(env, app.name, app.manifest).catch((error: unknown) =>
    console.error("enable_undo", app.name, "mcp.json not restored", error instanceof Error ? error.message : error),
  );
}

/** Turns an app off and revokes its tokens (C-22); on a disabled app it changes nothing. */
export async function disableApp(req: RouteRequest<unknown, unknown>, name: string) {
  const record = await requireRecord(req.env, name);
  return auditedRefusal(req, "app_disable_refused", record.name, () =>
    withTransition(req, record.name, "disable", async () => {
      const current = (await readRecord(req.env, record.name)) ?? record;
      if (!current.enabled) {
        await req.audit({
          kind: "app_disabled",
          outcome: "allowed",
          subject: current.name,
          detail: { changed: false, tokens_revoked: 0 },
        });
        return { app: await appRegistry(req.env).get(current.name), changed: false };
      }
      await stopServersThenBackend(req.env, current);
      await appRegistry(req.env).setEnabled(current.name, false);
      await appRegistry(req.env).reconcileJobs(current.name, req.now);
      const revoked = await sessions(req.env).revokeApp(current.name, req.now);
      await closeAppSockets(req.env, current.name);
      await req.audit({
        kind: "app_disabled",
        outcome: "allowed",
        subject: current.name,
        detail: { changed: true, tokens_revoked: revoked },
      });
      await emitEvent(req.env, "app.disabled", { app: current.name });
      return { app: await appRegistry(req.env).get(current.name), changed: true };
    }),
  );
}

/**
 * Its servers leave mcp.json first, so no agent starts one of a disabled app (MCP-01); a
 * backend that cannot be stopped puts them back, so the app stays wholly on.
 */
async function stopServersThenBackend(env: Env, app: AppRecord): Promise<void> {
  await deregisterMcpServers(env, app.name, app.manifest);
  try {
    if (app.manifest.backend) await bridgeCall(env, "POST /backends/stop", { name: app.name }, 30_000);
  } catch (error) {
    await registerMcpServers(env, app.name, app.manifest).catch(() => undefined);
    throw error;
  }
}
