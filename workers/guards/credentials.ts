// Step 2: the one credential-selection rule (AUTH-07/10). Carriers: `?token=` (the
// browser's entry link, exchanged for a cookie before routing), the `pc_token_<port>`
// cookie, `Authorization: Bearer` (stateless), and `?app_token=` for an app page's own
// asset and socket URLs. Another Authorization scheme is ignored (AUTH-14).
import { GatewayError, type ErrorCode } from "../contracts/errors";
import type { RefusalReason } from "../contracts/session";

export interface PresentedCredentials {
  cookie: string | null;
  bearer: string | null;
  link: string | null;
  appToken: string | null;
}

export function cookieName(port: string): string {
  return `pc_token_${port}`;
}

/** Reads every carrier once; none of the values is ever logged or echoed. */
export function presentedCredentials(request: Request, url: URL, port: string): PresentedCredentials {
  const authorization = request.headers.get("authorization") ?? "";
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  return {
    cookie: readCookie(request.headers.get("cookie") ?? "", cookieName(port)),
    bearer: bearer ? bearer[1] : null,
    link: url.searchParams.get("token"),
    appToken: url.searchParams.get("app_token"),
  };
}

function readCookie(header: string, name: string): string | null {
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

const BROWSER_CODES: Record<RefusalReason, ErrorCode> = {
  signed_out: "session_signed_out",
  signed_out_elsewhere: "session_signed_out",
  signed_out_others: "session_signed_out",
  signed_out_everywhere: "session_signed_out",
  limit: "session_signed_out",
  replaced: "session_signed_out",
  superseded: "session_signed_out",
  key_replaced: "session_signed_out",
  ended: "session_signed_out",
  expired: "session_expired",
  link_expired: "session_expired",
  link_used: "session_required",
  not_signed_in: "session_required",
};

/** A browser refusal (cookie or link): code by reason, with the reason, when, and X-Auth-Required. */
export function browserRefusal(reason: RefusalReason, at: number | null): GatewayError {
  return new GatewayError(BROWSER_CODES[reason], {
    vars: { reason: reason.replace(/_/g, " ") },
    detail: { reason, at: at === null ? null : new Date(at).toISOString() },
    headers: { "X-Auth-Required": "true" },
  });
}
