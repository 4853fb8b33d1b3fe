// The gateway's calls to the host bridge: loopback only, with the internal credential and
// the work named, each one a row of the bridge contract whose answer schema parses what
// comes back, like any other boundary.
import { GatewayError } from "../kernel/contracts/errors";
import {
  BRIDGE_OPERATIONS,
  type BridgeAnswer,
  type BridgeOperationName,
  type BridgeRequest,
} from "../kernel/contracts/bridge-operations";
import type { Env } from "../durable/env";
import { WORK_HEADER } from "../kernel/contracts/internal-work";

/** Sends one bridge operation; a bridge that cannot be reached is bridge_unavailable. */
async function send<N extends BridgeOperationName>(
  env: Env,
  operation: N,
  body: BridgeRequest<N>,
  timeoutMs: number,
): Promise<Response> {
  const contract = BRIDGE_OPERATIONS[operation];
  try {
    return await fetch(`${env.BRIDGE_URL}${operation.slice(contract.method.length + 1)}`, {
      method: contract.method,
      headers: {
        "X-Internal-Secret": env.INTERNAL_SECRET,
        [WORK_HEADER]: "gateway",
        "Content-Type": "application/json",
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    throw new GatewayError("bridge_unavailable", {
      vars: { reason: error instanceof Error ? error.message : String(error) },
      cause: error,
    });
  }
}

/** The error a refused answer raises: the bridge's own code when it sent an envelope, bridge_unavailable otherwise. */
function refusal(response: Response, payload: unknown): GatewayError {
  const envelope = payload as { error?: { code?: string; message?: string; detail?: unknown } } | null;
  if (envelope?.error?.code)
    return GatewayError.fromEnvelope(
      envelope.error.code,
      envelope.error.message ?? "",
      envelope.error.detail,
      response.status,
    );
  return new GatewayError("bridge_unavailable", { vars: { reason: `status ${response.status}` } });
}

/** Calls one bridge operation; a bridge error envelope is re-raised with its code, anything else is bridge_unavailable. */
export async function bridgeCall<N extends BridgeOperationName>(
  env: Env,
  operation: N,
  body: BridgeRequest<N>,
  timeoutMs = 10_000,
): Promise<BridgeAnswer<N>> {
  const response = await send(env, operation, body, timeoutMs);
  const payload = (await response.json().catch(() => null)) as unknown;
  if (!response.ok) throw refusal(response, payload);
  const parsed = BRIDGE_OPERATIONS[operation].answer.safeParse(payload);
  if (!parsed.success)
    throw new GatewayError("bridge_unavailable", { vars: { reason: "the answer did not match its contract" } });
  return parsed.data as BridgeAnswer<N>;
}

/**
 * Calls a bridge operation that answers bytes, not JSON (a backup archive): the answer's body is
 * handed back unread for the route to stream; a refusal is re-raised with its code as bridgeCall does.
 */
export async function bridgeStream<N extends BridgeOperationName>(
  env: Env,
  operation: N,
  body: BridgeRequest<N>,
  timeoutMs: number,
): Promise<Response> {
  const response = await send(env, operation, body, timeoutMs);
  if (response.ok) return response;
  throw refusal(response, await response.json().catch(() => null));
}
