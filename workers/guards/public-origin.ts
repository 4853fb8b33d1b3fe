// Edge mode: the same worker run on Cloudflare, where PERSONALCLAW_PUBLIC_ORIGIN names its public
// https:// origin (wrangler.jsonc). Then that origin is the gateway's own (Host without a port,
// https:// Origin), the client address is Cloudflare's CF-Connecting-IP, and sign-in links
// carry the public URL. A local start binds the variable empty: edge mode is off, and nothing
// here reads a header a local client could forge.

import { readPublicOrigin, type PublicOriginSetting } from "../../kernel/rules/public-origin";

let cached: { value: string | undefined; setting: PublicOriginSetting } | null = null;

/** The setting of this worker's bindings, read once per isolate; an invalid value is logged once. */
export function publicOriginOf(env: { PERSONALCLAW_PUBLIC_ORIGIN?: string }): PublicOriginSetting {
  const value = env.PERSONALCLAW_PUBLIC_ORIGIN;
  if (cached !== null && cached.value === value) return cached.setting;
  const setting = readPublicOrigin(value);
  if (setting.mode === "invalid")
    console.error(`PERSONALCLAW_PUBLIC_ORIGIN is ${setting.reason}: every Host is refused until it is fixed`);
  cached = { value, setting };
  return setting;
}

/** The URL a sign-in link opens: the public origin at the edge, this machine's loopback port locally. */
export function signInBaseUrl(env: { PERSONALCLAW_PUBLIC_ORIGIN?: string; GATEWAY_PORT: string }): string {
  const setting = publicOriginOf(env);
  return setting.mode === "edge" ? `${setting.public.origin}/` : `http://127.0.0.1:${env.GATEWAY_PORT}/`;
}
