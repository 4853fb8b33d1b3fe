// How the app.json contract refuses a manifest: a result, never a throw, naming the field and
// carrying the registry's sentence for the code.
import { GatewayError, type ErrorCode } from "./errors";

export type ManifestRefusal = {
  ok: false;
  code: ErrorCode;
  message: string;
  field: string;
  detail?: Record<string, unknown>;
};

/** The refusal `code` for `field`, its message filled from the field and `vars`. */
export function refusal(
  code: ErrorCode,
  field: string,
  vars: Record<string, string> = {},
  detail?: Record<string, unknown>,
): ManifestRefusal {
  const message = new GatewayError(code, { vars: { field, ...vars } }).message;
  return detail ? { ok: false, code, message, field, detail } : { ok: false, code, message, field };
}

/** `manifest_invalid` for a rule a field-by-field schema cannot state, naming the field and why. */
export function invalidField(field: string, reason: string): ManifestRefusal {
  return refusal("manifest_invalid", field, { reason }, { field });
}
