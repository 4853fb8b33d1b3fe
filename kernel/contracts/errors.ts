// The one error type and the envelope it becomes: a stable code from the registry
// (error-codes.ts), its status, a sentence and optional detail. The registry's codes are
// re-exported here, so the error contract keeps one import point.
import { z } from "zod";
import { ERROR_CODES, type ErrorCode } from "./error-codes";

export { ERROR_CODES, type ErrorCode } from "./error-codes";

export const ErrorEnvelopeSchema = z.object({
  error: z.object({ code: z.string(), message: z.string(), detail: z.unknown().optional() }),
});
export type ErrorEnvelope = z.infer<typeof ErrorEnvelopeSchema>;

/** The registry's sentence for `code` with each `{name}` filled from vars (an unknown name stays as written). */
export function errorMessage(code: ErrorCode, vars: Record<string, string | number> = {}): string {
  return ERROR_CODES[code].message.replace(/\{(\w+)\}/g, (whole, key: string) =>
    key in vars ? String(vars[key]) : whole,
  );
}

/** The one error type: a stable code, its status, a sentence and optional detail. */
export class GatewayError extends Error {
  override readonly name = "GatewayError";
  readonly code: ErrorCode;
  readonly status: number;
  readonly detail: unknown;
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    opts: {
      vars?: Record<string, string | number>;
      message?: string;
      detail?: unknown;
      headers?: Record<string, string>;
      /** The failure this one reports (a thrown error, a refused answer): kept for logs and stack traces, never sent. */
      cause?: unknown;
    } = {},
  ) {
    super(opts.message ?? errorMessage(code, opts.vars), opts.cause === undefined ? undefined : { cause: opts.cause });
    this.code = code;
    this.status = ERROR_CODES[code].status;
    this.detail = opts.detail;
    this.headers = opts.headers ?? {};
  }

  /** Re-raises an envelope another PersonalClaw process answered; an unknown code is the bridge's fault. */
  static fromEnvelope(code: string, message: string, detail: unknown, status: number): GatewayError {
    if (code in ERROR_CODES) return new GatewayError(code as ErrorCode, { message, detail });
    return new GatewayError("bridge_unavailable", { vars: { reason: `unknown code ${code} (status ${status})` } });
  }

  toEnvelope(): ErrorEnvelope {
    const error: ErrorEnvelope["error"] = { code: this.code, message: this.message };
    if (this.detail !== undefined) error.detail = this.detail;
    return { error };
  }
}
