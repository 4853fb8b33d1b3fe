// The gateway's half of a merge restore (docs/backup-and-restore.md, "Merge"): the CLI has put
// an app's installed bytes and data/ from a checked archive in place; here its archived record
// is added as it was consented to (never over a record the home has), its archived config
// written, and it is started, its MCP servers and jobs registered, as an install does. A record
// that cannot be added is reported, and the CLI removes the folder it placed.
import { appRegistry } from "../../durable/instances";
import { emitEvent } from "../../durable/event-hub/emit";
import type { AppRecord } from "../../kernel/contracts/app-record";
import { AppManifestSchema } from "../../kernel/contracts/manifest";
import { APP_NAME_PATTERN } from "../../kernel/rules/app-name";
import { registerMcpServers } from "../mcp-registration";
import type { RouteRequest } from "../route-row";
import { startBackend } from "./enable-disable";

export interface MergedAppInput {
  record: Record<string, unknown>;
  config: Record<string, unknown> | null;
}

export type MergeOutcome = { name: string; outcome: "merged" | "unchanged"; why: string };

/** Adds one archived app's record; `unchanged` (with why) when the home has the name or the record is not one. */
export async function mergeArchivedApp(
  req: RouteRequest<unknown, unknown>,
  input: MergedAppInput,
): Promise<MergeOutcome> {
  const name = String(input.record.name ?? "");
  const manifest = AppManifestSchema.safeParse(input.record.manifest);
  if (!APP_NAME_PATTERN.test(name) || !manifest.success || manifest.data.name !== name)
    return { name, outcome: "unchanged", why: "its archived record is not readable" };
  if (input.record.origin !== "local")
    return { name, outcome: "unchanged", why: "a native app comes with the package, not from an archive" };
  const registry = appRegistry(req.env);
  const record = { ...input.record, manifest: manifest.data } as unknown as AppRecord;
  if (!(await registry.add(record))) return { name, outcome: "unchanged", why: "this home has an app of that name" };
  if (input.config !== null) {
    const current = (await registry.config(name)) as { revision: string } | null;
    if (current) await registry.replaceConfig(name, current.revision, input.config);
  }
  await req.audit({
    kind: "app_merged_from_backup",
    outcome: "allowed",
    subject: name,
    detail: { version: record.version, consent_digest: record.consentDigest },
  });
  await emitEvent(req.env, "app.installed", { app: name });
  if (record.enabled) await startBackend(req.env, name, manifest.data, record.consentDigest);
  await registerMcpServers(req.env, name, manifest.data).catch(() => undefined);
  await registry.reconcileJobs(name, req.now);
  return {
    name,
    outcome: "merged",
    why: "absent from this home: installed from the archive's bytes and consent, with its data",
  };
}
