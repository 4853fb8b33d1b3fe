// The one registry of error codes. Codes are append-only and never reworded: clients key on
// `code`. A message is a sentence template; `{name}` is filled from the thrower's vars.
import { z } from "zod";

export const ERROR_CODES = {
  bad_request: { status: 400, message: "The request is not readable: {reason}." },
  field_not_a_boolean: { status: 400, message: "The field '{field}' must be JSON true or false." },
  unsupported_media_type: { status: 415, message: "A state-changing request must send an application/json body." },
  body_too_large: { status: 413, message: "The request body is larger than the {limit}-byte limit." },
  not_found: { status: 404, message: "There is no route {method} {path}." },
  method_not_allowed: { status: 405, message: "The route {path} does not accept {method}." },
  internal_error: { status: 500, message: "The gateway failed while handling this request; the gateway log has the detail." },
  revision_required: { status: 428, message: "This write replaces a whole document: send If-Match with the revision you read." },
  stale_write: { status: 409, message: "The document changed since you read it; read it again and re-apply your change." },
  host_not_allowed: { status: 403, message: "The Host header does not name this gateway." },
  origin_not_allowed: { status: 403, message: "A state-changing request must come from this gateway's own origin." },
  internal_route_refused: { status: 403, message: "The internal credential does not open {method} {path}." },
  internal_secret_invalid: { status: 403, message: "The internal credential is not the one this start issued." },
  internal_call_names_no_work: { status: 403, message: "An internal call must name its work in X-Session-Key." },
  bridge_unavailable: { status: 502, message: "The host bridge did not answer: {reason}." },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export const ErrorEnvelopeSchema = z.object({
  error: z.object({ code: z.string(), message: z.string(), detail: z.unknown().optional() }),
});
export type ErrorEnvelope = z.infer<typeof ErrorEnvelopeSchema>;

function fill(template: string, vars: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (whole, key: string) => (key in vars ? String(vars[key]) : whole));
}

/** The one error type: a stable code, its status, a sentence and optional detail. */
export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly detail: unknown;
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    opts: { vars?: Record<string, string | number>; message?: string; detail?: unknown; headers?: Record<string, string> } = {},
  ) {
    const entry = ERROR_CODES[code];
    super(opts.message ?? fill(entry.message, opts.vars ?? {}));
    this.code = code;
    this.status = entry.status;
    this.detail = opts.detail;
    this.headers = opts.headers ?? {};
  }

  toEnvelope(): ErrorEnvelope {
    const error: ErrorEnvelope["error"] = { code: this.code, message: this.message };
    if (this.detail !== undefined) error.detail = this.detail;
    return { error };
  }
}
