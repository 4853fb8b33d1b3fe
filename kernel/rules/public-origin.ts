// What PERSONALCLAW_PUBLIC_ORIGIN may name: the bare https:// origin of an edge worker. The worker
// reads its variable with it (workers/guards/public-origin.ts) and the CLI the URL a machine pairs
// with (`personalclaw edge pair`), so both hold the same rule.

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
