// A restart of an enabled app's backend, under the app's transition lock: stopped, then
// started with the same command and secret; it counts in the backend's `restarts`.
import { appRegistry } from "../../durable/instances";
import { GatewayError } from "../../kernel/contracts/errors";
import { requireRecord } from "../app-registry";
import { bridgeCall } from "../bridge-client";
import type { RouteRequest } from "../route-row";
import { auditedRefusal } from "./audited-refusal";
import { withTransition } from "./transition-lock";

/** Restarts an app's backend; an app without one, or a disabled app, is refused with app_restart_failed. */
export async function restartApp(req: RouteRequest<unknown, unknown>, name: string) {
  const record = await requireRecord(req.env, name);
  return auditedRefusal(req, "app_restart_refused", record.name, () =>
    withTransition(req, record.name, "restart", async () => {
      if (!record.manifest.backend)
        throw new GatewayError("app_restart_failed", {
          vars: { name: record.name, reason: "the app has no backend" },
        });
      if (!record.enabled)
        throw new GatewayError("app_restart_failed", {
          vars: { name: record.name, reason: "the app is disabled; enable it" },
        });
      const restarted = await bridgeCall(
        req.env,
        "POST /backends/restart",
        { name: record.name, manifest: record.manifest, digest: record.consentDigest },
        60_000,
      );
      if (!restarted.started)
        throw new GatewayError("app_restart_failed", {
          vars: { name: record.name, reason: restarted.reason ?? "it did not start" },
        });
      await req.audit({ kind: "app_restarted", outcome: "allowed", subject: record.name });
      return { app: await appRegistry(req.env).get(record.name) };
    }),
  );
}
