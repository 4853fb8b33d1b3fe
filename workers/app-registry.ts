import type { Env } from "./env";

/** The one AppRegistry instance of this gateway. */
export function appRegistry(env: Env) {
  return env.APPS.get(env.APPS.idFromName("apps"));
}
