// The worker's door to AppRegistry: the one instance, the one typed read of a record, and the
// one refusal for a name no installed app has.
import { GatewayError } from "./contracts/errors";
import type { AppRecord } from "./contracts/app-record";
import type { Env } from "./env";

/** The one AppRegistry instance of this gateway. */
export function appRegistry(env: Env) {
  return env.APPS.get(env.APPS.idFromName("apps"));
}

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
