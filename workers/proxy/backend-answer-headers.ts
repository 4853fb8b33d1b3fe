// A backend's answer is shown on the gateway's own origin, where the owner's browser holds the
// owner's session. Anything in it the browser acts on (a cookie, a redirect, a refresh, a
// policy, a preload) would be the app acting as the gateway. So the answer's headers are built
// from this one table, everything else is dropped, and every answer is made inert: the same
// sandbox CSP as an app's UI (scripts may run, never with the gateway's origin), nosniff, and
// no Referer.
import { SANDBOXED_UI_CSP, allowSandboxedUi } from "./sandboxed-ui";
import { pathAmbiguity } from "../guards/request-path";

/** The backend headers that pass, and why each is harmless on the gateway's origin. */
export const PASSING_BACKEND_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "says what the body is; with nosniff the browser never guesses otherwise",
  "content-length": "frames the body",
  "content-encoding": "says how the body is compressed",
  "content-language": "describes the body",
  "content-disposition": "inline or download of the body; either way the body stays sandboxed",
  "content-range": "frames a partial body",
  "accept-ranges": "lets a client ask for part of the body",
  "cache-control": "caching of this URL only",
  expires: "caching of this URL only",
  etag: "revalidation of this URL only",
  "last-modified": "revalidation of this URL only",
  vary: "which request headers the cached answer depends on",
  "retry-after": "when to ask again after a 429 or 503",
  // location: passes only through keptLocation() below.
};

// Named here because a backend will try them; they are dropped like every unlisted header.
// set-cookie (plants or overwrites the owner's cookie), refresh (navigates anywhere),
// clear-site-data (wipes the owner's session), content-security-policy and its -report-only
// twin (would replace the sandbox), link (preloads, stylesheets), www-authenticate (a login
// prompt in the gateway's name), access-control-* (the gateway's own CORS answer), strict-
// transport-security, permissions-policy, cross-origin-*, origin-agent-cluster, and hop-by-hop.

/** The headers every proxied answer carries, whatever the backend sent. */
export const INERT_ANSWER_HEADERS: Readonly<Record<string, string>> = {
  "Content-Security-Policy": SANDBOXED_UI_CSP,
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
};

/**
 * The Location to send on, or null: kept only when it resolves (against the URL the client
 * asked) to the same origin, inside `/apps/<app>/`, in a form the gateway's path rule
 * accepts. Returned origin-relative, so it never names another host.
 */
export function keptLocation(location: string, requestUrl: URL, app: string): string | null {
  let target: URL;
  try {
    target = new URL(location, requestUrl);
  } catch {
    return null;
  }
  if (target.origin !== requestUrl.origin) return null;
  if (!target.pathname.startsWith(`/apps/${app}/`) || pathAmbiguity(target.pathname) !== null) return null;
  return target.pathname + target.search + target.hash;
}

/** The answer's headers: the passing ones, a kept Location, the inert set and the sandboxed UI's CORS. */
export function backendAnswerHeaders(
  incoming: Headers,
  location: string | null,
  requestOrigin: string | null,
): Headers {
  const out = new Headers();
  for (const [name, value] of incoming) {
    if (Object.hasOwn(PASSING_BACKEND_HEADERS, name.toLowerCase())) out.append(name, value);
  }
  if (location !== null) out.set("Location", location);
  for (const [name, value] of Object.entries(INERT_ANSWER_HEADERS)) out.set(name, value);
  allowSandboxedUi(requestOrigin, out);
  return out;
}

/** The backend's answer as the gateway shows it: its status and `body`, with backendAnswerHeaders' headers only. */
export function inertAnswer(
  answer: Response,
  location: string | null,
  requestOrigin: string | null,
  body: ReadableStream | null = answer.body,
): Response {
  return new Response(body, {
    status: answer.status,
    statusText: answer.statusText,
    headers: backendAnswerHeaders(answer.headers, location, requestOrigin),
  });
}
