// Edge mode: the same worker run on Cloudflare, where PERSONALCLAW_PUBLIC_ORIGIN names its public
// https:// origin (wrangler.jsonc). Then that origin is the gateway's own (Host without a port,
// https:// Origin), the client address is Cloudflare's CF-Connecting-IP, and sign-in links
// carry the public URL. A local start binds the variable empty: edge mode is off, and nothing
// here reads a header a local client could forge.

/** The public origin of an edge worker: `https://name[:port]` and its Host value. */
export interface PublicOrigin {
  origin: string;
  host: string;
}

export type PublicOriginSetting =
  { mode: "local" } | { mode: "edge"; public: PublicOrigin } | { mode: "invalid"; reason: string };

/** Reads the variable: empty is local; anything but a bare https:// origin is invalid (and refuses every Host). */
export function readPublicOrigin(value: string | undefined): PublicOriginSetting {
  const text = (value ?? "").trim();
  if (text === "") return { mode: "local" };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { mode: "invalid", reason: "not a URL" };
  }
  if (url.protocol !== "https:") return { mode: "invalid", reason: "not https://" };
  if (url.username !== "" || url.password !== "") return { mode: "invalid", reason: "it carries credentials" };
  if (url.origin !== text.replace(/\/$/, "").toLowerCase() || url.search !== "" || url.hash !== "")
    return { mode: "invalid", reason: "an origin has no path, query or fragment" };
  return { mode: "edge", public: { origin: url.origin, host: url.host } };
}

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
