// The gateway's calls to the host bridge: loopback only, with the internal credential and
// the work named, answers parsed with zod like any other boundary.
import type { z } from "zod";
import { GatewayError } from "./contracts/errors";
import type { Env } from "./env";

/** Calls one bridge operation; a bridge error envelope is re-raised with its code, anything else is bridge_unavailable. */
export async function bridgeCall<T>(
  env: Env,
  method: "GET" | "POST",
  path: string,
  schema: z.ZodType<T>,
  body?: unknown,
  timeoutMs = 10_000,
): Promise<T> {
  let response: Response;
  try {
    response = await fetch(`${env.BRIDGE_URL}${path}`, {
      method,
      headers: {
        "X-Internal-Secret": env.INTERNAL_SECRET,
        "X-Session-Key": "gateway",
        "Content-Type": "application/json",
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    throw new GatewayError("bridge_unavailable", {
      vars: { reason: error instanceof Error ? error.message : String(error) },
    });
  }
  const payload = (await response.json().catch(() => null)) as unknown;
  if (!response.ok) {
    const envelope = payload as { error?: { code?: string; message?: string; detail?: unknown } } | null;
    if (envelope?.error?.code)
      throw GatewayError.fromEnvelope(
        envelope.error.code,
        envelope.error.message ?? "",
        envelope.error.detail,
        response.status,
      );
    throw new GatewayError("bridge_unavailable", { vars: { reason: `status ${response.status}` } });
  }
  const parsed = schema.safeParse(payload);
  if (!parsed.success)
    throw new GatewayError("bridge_unavailable", { vars: { reason: "the answer did not match its contract" } });
  return parsed.data;
}
