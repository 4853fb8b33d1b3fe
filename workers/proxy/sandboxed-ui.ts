// An app's UI is third-party code. Served on the gateway's own origin it would run with the
// owner's session cookie and could call every owner route. So its pages are served with a
// CSP `sandbox` (no allow-same-origin): the page gets an opaque origin, the browser sends it
// no cookie, and the gateway refuses its cross-site calls to /api/*. The page acts only with
// the app token the owner's redirect handed it (`?app_token=`), through CORS answers that
// name the opaque origin "null" and never allow credentials.
import { GatewayError } from "../../kernel/contracts/errors";

/** The CSP of every app UI file: its own files and the gateway, in a sandbox with no origin. */
export const SANDBOXED_UI_CSP =
  "sandbox allow-scripts allow-forms allow-popups allow-modals allow-downloads; default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'self'; base-uri 'none'; form-action 'self'";

/** The CORS preflight answer for a sandboxed UI calling its own backend. */
export const SANDBOXED_UI_PREFLIGHT: Record<string, string> = {
  "Access-Control-Allow-Origin": "null",
  "Access-Control-Allow-Methods": "GET, POST, PUT, PATCH, DELETE",
  "Access-Control-Allow-Headers": "authorization, content-type, if-match",
  "Access-Control-Max-Age": "600",
  Vary: "Origin",
};

/** Lets a sandboxed UI read its backend's answer (only when it asked from the opaque origin). */
export function allowSandboxedUi(requestOrigin: string | null, headers: Headers): void {
  if (requestOrigin !== "null") return;
  headers.set("Access-Control-Allow-Origin", "null");
  if (!/(^|,\s*)origin(\s*,|$)/i.test(headers.get("Vary") ?? "")) headers.append("Vary", "Origin");
}

/**
 * A proxy failure (503 app_backend_unavailable, 504, 502...) the sandboxed UI reads as it reads
 * a success: without the CORS answer its page saw only "Failed to fetch", never the code.
 */
export function readableBySandboxedUi(error: unknown, requestOrigin: string | null): unknown {
  if (!(error instanceof GatewayError) || requestOrigin !== "null") return error;
  const headers = new Headers(error.headers);
  allowSandboxedUi(requestOrigin, headers);
  Object.assign(error.headers, Object.fromEntries(headers));
  return error;
}
