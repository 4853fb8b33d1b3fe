// Expected failures of staging, scanning and preview are values, not exceptions: a refusal
// carries a registered code, the registry's sentence, and the bundle path it names.
import { errorMessage, type ErrorCode } from "../../kernel/contracts/errors";

export type Refusal = {
  ok: false;
  code: ErrorCode;
  message: string;
  path?: string;
  field?: string;
  detail?: unknown;
};

/** Builds a refusal whose message is the registry's template filled with vars. */
export function refuse(
  code: ErrorCode,
  vars: Record<string, string | number> = {},
  extra: { field?: string; detail?: unknown } = {},
): Refusal {
  const message = errorMessage(code, vars);
  const out: Refusal = { ok: false, code, message };
  if (typeof vars.path === "string") out.path = vars.path;
  if (extra.field !== undefined) out.field = extra.field;
  if (extra.detail !== undefined) out.detail = extra.detail;
  return out;
}
