// The package's native apps, recorded at every start: origin builtin, lifecycle locked (never
// updated or uninstalled), the owner's on/off kept. A stolen internal credential must not be
// able to make an app unremovable: the bridge proves by path and digest that it staged each
// from the package's own apps/native/ at this start (POST /apps/native/verify), and the
// manifest recorded is the one the bridge read, never the caller's.
import { appRegistry } from "../../durable/instances";
import type { AppRecord } from "../../kernel/contracts/app-record";
import type { NativeAppsReportSchema } from "../../kernel/contracts/bridge-operations";
import { AppManifestSchema } from "../../kernel/contracts/manifest";
import type { z } from "zod";
import { readRecord } from "../app-registry";
import { bridgeCall } from "../bridge-client";
import { registerMcpServers } from "../mcp-registration";
import type { RouteRequest } from "../route-row";
import { auditedRefusal } from "./audited-refusal";
import { uiRevisionOf } from "./update-commit";

type NativeAppsReport = z.output<typeof NativeAppsReportSchema>;

/** Records each native app the bridge proves, with its jobs and MCP servers reconciled; a new one is audited. */
export async function recordNativeApps(
  req: RouteRequest<unknown, unknown>,
  apps: NativeAppsReport["apps"],
): Promise<{ synced: number }> {
  const registry = appRegistry(req.env);
  for (const entry of apps) {
    const proof = await auditedRefusal(req, "app_native_refused", entry.source, () =>
      bridgeCall(req.env, "POST /apps/native/verify", entry),
    );
    const manifest = AppManifestSchema.parse(proof.manifest);
    const existing = await readRecord(req.env, manifest.name);
    const record: AppRecord = {
      name: manifest.name,
      displayName: manifest.displayName ?? manifest.name,
      version: manifest.version,
      origin: "builtin",
      source: "builtin",
      resources: "gateway",
      lifecycle: "locked",
      enabled: existing?.origin === "builtin" ? existing.enabled : true,
      manifest,
      consentDigest: entry.digest,
      installedAt: existing?.installedAt ?? new Date(req.now).toISOString(),
      uiRevision: uiRevisionOf(manifest, entry.digest),
      uiFiles: proof.uiFiles,
    };
    await registry.replace(record);
    // Re-synced at every start, so its jobs and servers are reconciled with it (CRON-01).
    await registry.reconcileJobs(manifest.name, req.now);
    if (record.enabled) await registerMcpServers(req.env, manifest.name, manifest, existing?.manifest);
    if (!existing)
      await req.audit({
        kind: "app_installed",
        outcome: "allowed",
        subject: manifest.name,
        detail: { origin: "builtin", consent: entry.digest },
      });
  }
  return { synced: apps.length };
}
