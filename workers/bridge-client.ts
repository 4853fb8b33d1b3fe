// The gateway's calls to the host bridge: over loopback with the internal credential and the
// work named, or at the edge over the paired machine's link, each one a row of the bridge contract whose answer schema parses what
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
import { bridgeLinkOf, bridgeLinkPairing } from "../durable/instances";
import { readPublicOrigin } from "../kernel/rules/public-origin";
import type { RelayAnswer, RelayRequest } from "../kernel/contracts/bridge-link";

/** Sends one bridge operation; a bridge that cannot be reached is bridge_unavailable. */
async function send<N extends BridgeOperationName>(
  env: Env,
  operation: N,
  body: BridgeRequest<N>,
  timeoutMs: number,
): Promise<Response> {
  if (readPublicOrigin(env.PERSONALCLAW_PUBLIC_ORIGIN).mode !== "local")
    return sendOverLink(env, operation, body, timeoutMs);
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

// The machine whose bridge the edge calls: the first one paired of those not forgotten. Kept once
// found, and read again after a call over its link fails (a forgotten machine's link always does).
let pairedMachine: string | null = null;

/** The link of the machine whose bridge the edge calls; bridge_unavailable while none is paired. */
async function pairedLink(env: Env) {
  pairedMachine ??= await bridgeLinkPairing(env).firstMachine();
  if (pairedMachine === null)
    throw new GatewayError("bridge_unavailable", { vars: { reason: "no machine is paired with this edge" } });
  return bridgeLinkOf(env, pairedMachine);
}

/** A call over the link failed: bridge_unavailable, and the machine is looked up again next time. */
function linkFailed(reason: string): GatewayError {
  pairedMachine = null;
  return new GatewayError("bridge_unavailable", { vars: { reason } });
}

/**
 * Edge mode: relays one request to an app's backend or files on the paired machine and answers
 * what the machine answered. No machine, no link, a link that closes first or an answer past
 * `timeoutMs` are bridge_unavailable at once.
 */
export async function relayOverLink(env: Env, request: RelayRequest, timeoutMs: number): Promise<RelayAnswer> {
  const result = await (await pairedLink(env)).relay(request, timeoutMs);
  if (!result.ok) throw linkFailed(result.reason);
  // Parsed by the BridgeLink as it arrived; RPC typing widens its header pairs to arrays.
  return result.answer as RelayAnswer;
}

/**
 * Edge mode: the operation crosses the paired machine's link (durable/bridge-link). No machine
 * paired, no bridge connected, a link that closes mid-call or a call past its time are all
 * bridge_unavailable at once, never a wait; the answer is then read exactly as a loopback one.
 */
async function sendOverLink<N extends BridgeOperationName>(
  env: Env,
  operation: N,
  body: BridgeRequest<N>,
  timeoutMs: number,
): Promise<Response> {
  const result = await (
    await pairedLink(env)
  ).call(operation, body === undefined ? null : JSON.stringify(body), timeoutMs);
  if (!result.ok) throw linkFailed(result.reason);
  const bytes =
    "text" in result.body ? result.body.text : Uint8Array.from(atob(result.body.base64), (ch) => ch.charCodeAt(0));
  return new Response(bytes, { status: result.status });
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
