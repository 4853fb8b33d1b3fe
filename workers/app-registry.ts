// The worker's door to AppRegistry: the one instance, the one typed read of a record, the one
// refusal for a name no installed app has, and the reads every request makes (proxy target,
// grants, counts) kept in the isolate. A request that changes nothing then makes no Durable
// Object call: a kept read is used only while AppRegistry's change epoch is the one it was
// read under, and every write bumps that epoch in the same turn (kept-reads.ts), so a
// disable, an uninstall, a health change or a new secret is seen by the very next request.
import { GatewayError } from "../kernel/contracts/errors";
import type { AppGrants, AppRecord, ProxyTarget } from "../kernel/contracts/app-record";
import type { Env } from "../durable/env";
import { registryEpoch } from "../durable/change-epoch";
import { appRegistry } from "../durable/instances";
import { keptReads, sharedEpochProof } from "./kept-reads";

/** The refusal for a name no installed app has; the name comes from the request, so it is cut to 80 characters. */
export function appNotFound(name: string): GatewayError {
  return new GatewayError("app_not_found", { vars: { name: name.slice(0, 80) } });
}

// Records cross the RPC boundary as structured clones; the manifest's open index signature
// defeats RPC's type mapping, so this one read of a record states its type.
export async function readRecord(env: Env, name: string): Promise<AppRecord | null> {
  return (await appRegistry(env).record(name)) as AppRecord | null;
}

/** The record of an installed app, or 404 app_not_found. */
export async function requireRecord(env: Env, name: string): Promise<AppRecord> {
  const record = await readRecord(env, name);
  if (!record) throw appNotFound(name);
  return record;
}

const registryShared = sharedEpochProof(appRegistry);

/** Where and how the app's backend is reached, or null for an unknown app. */
export const proxyTargetOf = keptReads<ProxyTarget>(registryEpoch, registryShared, (env, name) =>
  appRegistry(env).proxyTarget(name),
);

/** What the app permission gate needs of an app, or null for an unknown one. */
export const grantsOf = keptReads<AppGrants>(registryEpoch, registryShared, (env, name) =>
  appRegistry(env).grants(name),
);

const keptCounts = keptReads<{ installed: number; running: number | null }>(registryEpoch, registryShared, (env) =>
  appRegistry(env).counts(),
);

/** How many apps are installed and how many backends run (null until the bridge has reported). */
export async function appCounts(env: Env): Promise<{ installed: number; running: number | null }> {
  return (await keptCounts(env, ""))!;
}
