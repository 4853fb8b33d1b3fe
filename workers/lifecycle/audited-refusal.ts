// A refused lifecycle step leaves its trace: the refusal the owner is answered with is also one
// security-log row naming its code, so the log and the answer say the same thing.
import { GatewayError } from "../../kernel/contracts/errors";
import type { RouteRequest } from "../route-row";

/** Runs `work`; a refusal becomes one security-log row naming its code, then is re-raised. */
export async function auditedRefusal<T>(
  req: RouteRequest<unknown, unknown>,
  kind: string,
  subject: string,
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof GatewayError) {
      const detail = (error.detail ?? {}) as { path?: string; step?: string };
      await req.audit({
        kind,
        outcome: "refused",
        subject,
        detail: { code: error.code, path: detail.path ?? null, step: detail.step ?? null },
      });
    }
    throw error;
  }
}
