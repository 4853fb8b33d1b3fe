// The one path rule. The router decodes percent-escapes before matching, a URL parser
// resolves dot segments and backslashes, and a guard that reads the raw text sees neither:
// `/%61pi/token/local` is routed as `/api/token/local` while a prefix check on the raw path
// says it is not an API path. So a path is accepted only in the one form every reader sees
// identically, and everything else is refused before routing.

const UNRESERVED = /[A-Za-z0-9\-._~]/;

/** Where a request URL's path begins: the first "/" after the scheme's "://", or -1. */
function pathStart(requestUrl: string): number {
  return requestUrl.indexOf("/", requestUrl.indexOf(":") + 3);
}

/** The raw path of a request URL exactly as the router slices it (up to `?` or `#`). */
export function rawPathOf(requestUrl: string): string {
  const start = pathStart(requestUrl);
  if (start === -1) return "/";
  let end = requestUrl.length;
  for (const mark of ["?", "#"]) {
    const at = requestUrl.indexOf(mark, start);
    if (at !== -1 && at < end) end = at;
  }
  return requestUrl.slice(start, end);
}

/**
 * Whether a request URL carries a query WHATWG's URL reads as a non-empty `search`: a "?" right
 * after the path with something before any "#". False only when `new URL(requestUrl).search`
 * is "", so a caller may skip making the URL for it.
 */
export function hasQuery(requestUrl: string): boolean {
  const start = pathStart(requestUrl);
  if (start === -1) return requestUrl.includes("?");
  const mark = requestUrl.indexOf("?", start);
  if (mark === -1) return false;
  const fragment = requestUrl.indexOf("#", start);
  return (fragment === -1 || fragment > mark + 1) && mark + 1 < requestUrl.length;
}

/** True for the gateway's own API: `/api` and every path below it. */
export function isGatewayApiPath(path: string): boolean {
  return path === "/api" || path.startsWith("/api/");
}

/**
 * True for an app backend's API through its proxy: `/apps/<name>/api` and every path below it,
 * which is what the proxy rows (`/apps/:name/api/*`) route and forward. Every check that treats
 * a backend call apart (the Origin check, the page-or-envelope choice, the proxy) asks this.
 */
export function isAppBackendPath(path: string): boolean {
  return /^\/apps\/[^/]+\/api(?:\/|$)/.test(path);
}

/**
 * Why `path` could be read two ways, or null when it cannot: a raw byte a parser rewrites,
 * an invalid or overlong escape, an escape of `/`, `\`, `%`, a control or an unreserved
 * character (a disguise: RFC 3986 §2.3 makes it equal to the plain letter), an empty or
 * dot segment, or any escape in the first segment or an app's name.
 */
export function pathAmbiguity(path: string): string | null {
  if (!path.startsWith("/")) return "it does not start with /";
  // Nearly every request: plain segments alone, which no rule below can refuse.
  if (PLAIN_PATH.test(path)) return null;
  return ambiguityByEveryRule(path);
}

/**
 * Segments of characters no URL parser rewrites and no decoder changes (RFC 3986 unreserved,
 * sub-delims, `:` and `@`), none empty but a last one, none `.` or `..`. It holds no `%`, so
 * no escape, no control, no non-ASCII and no backslash: every rule of ambiguityByEveryRule
 * accepts such a path, which request-path.test.ts checks over a generated corpus.
 */
const PLAIN_PATH = /^(?:\/(?!\.\.?(?:\/|$))[A-Za-z0-9\-._~!$&'()*+,;=:@]+)*\/?$/;

/** Every rule of the path rule, in order, for a path that is not plain (also the shortcut's reference). */
export function ambiguityByEveryRule(path: string): string | null {
  if (!path.startsWith("/")) return "it does not start with /";
  if (/[^\x21-\x7e]/.test(path)) return "it holds a raw space, control or non-ASCII character";
  if (path.includes("\\")) return "it holds a backslash";
  if (/%(?![0-9A-Fa-f]{2})/.test(path)) return "it holds a % that starts no escape";
  for (const match of path.matchAll(/%([0-9A-Fa-f]{2})/g)) {
    const byte = parseInt(match[1], 16);
    const char = String.fromCharCode(byte);
    if (char === "/" || char === "\\") return "it holds an encoded slash or backslash";
    if (char === "%") return "it is encoded twice";
    if (byte < 0x20 || byte === 0x7f) return "it holds an encoded control character or NUL";
    if (UNRESERVED.test(char)) return "it encodes a plain character";
  }
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return "an escape is not valid UTF-8";
  }
  if (/[\u0080-\u009f]/.test(decoded)) return "it holds an encoded control character";
  const segments = path.slice(1).split("/");
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i];
    if (segment === "." || segment === "..") return "it holds a dot segment";
    if (segment === "" && i < segments.length - 1) return "it holds an empty segment";
  }
  if (segments[0].includes("%")) return "its first segment is encoded";
  if (segments[0] === "apps" && segments.length > 1 && segments[1].includes("%")) return "the app name is encoded";
  // The last word: a URL parser must read it unchanged, or some reader would see another path.
  if (new URL(path, "http://gateway.invalid").pathname !== path) return "a URL parser rewrites it";
  return null;
}
