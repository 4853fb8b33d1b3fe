// The bridge's side of the bridge contract (kernel/contracts/bridge-operations.ts): the
// operation registry is built from one handler per contract row, each request is parsed with
// its row's schema before its handler sees it, and every call back into the gateway has its
// answer parsed with its row's schema.
import type { z } from "zod";
import { GatewayError } from "../kernel/contracts/errors";
import {
  BRIDGE_OPERATIONS,
  GATEWAY_CALLBACKS,
  type BridgeAnswer,
  type BridgeOperationName,
  type BridgeParsedRequest,
  type GatewayCallbackAnswer,
  type GatewayCallbackName,
  type GatewayCallbackRequest,
} from "../kernel/contracts/bridge-operations";
import type { BridgeOperation, ReceivedBridgeRequest } from "./server";

/** One handler per contract row: a row without a handler, or a handler without a row, does not type-check. */
export type BridgeHandlers = {
  [N in BridgeOperationName]: (request: {
    body: BridgeParsedRequest<N>;
    work: string;
    caller: AbortSignal;
  }) => Promise<BridgeAnswer<N>>;
};

/** A request that does not match its row is `bad_request`, naming the first field that did not. */
export function parseRequest<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success)
    throw new GatewayError("bad_request", {
      vars: { reason: `${parsed.error.issues[0].path.join(".")} ${parsed.error.issues[0].message}` },
    });
  return parsed.data;
}

/**
 * The registry the bridge server matches requests against. Refused at construction when the
 * handlers and the contract's rows differ, so a mismatch stops the bridge at its start.
 */
export function bridgeOperationRegistry(handlers: BridgeHandlers): Map<string, BridgeOperation> {
  const rows = Object.keys(BRIDGE_OPERATIONS).sort();
  const handled = Object.keys(handlers).sort();
  const unlisted = handled.filter((name) => !rows.includes(name));
  const unhandled = rows.filter((name) => !handled.includes(name));
  if (unlisted.length > 0 || unhandled.length > 0)
    throw new Error(
      `the bridge's operations differ from the bridge contract: without a row ${JSON.stringify(unlisted)}, without a handler ${JSON.stringify(unhandled)}`,
    );
  const registry = new Map<string, BridgeOperation>();
  for (const name of rows as BridgeOperationName[]) {
    const handler = handlers[name] as (request: ReceivedBridgeRequest) => Promise<unknown>;
    const schema = BRIDGE_OPERATIONS[name].request as z.ZodType;
    registry.set(name, async ({ body, work, caller }) => handler({ body: parseRequest(schema, body), work, caller }));
  }
  return registry;
}

/** How the bridge reaches the gateway's internal routes (the caller adds the credential). */
export type CallGateway = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: unknown }>;

/** A call back into the gateway whose answer did not come, or did not match its row. */
export class GatewayCallbackFailed extends Error {}

/** Calls one internal gateway route of the contract; `name` fills `:name` in its path. */
export async function callGatewayRoute<N extends GatewayCallbackName>(
  callGateway: CallGateway,
  callback: N,
  body: GatewayCallbackRequest<N>,
  name?: string,
): Promise<GatewayCallbackAnswer<N>> {
  const row = GATEWAY_CALLBACKS[callback];
  const path = name === undefined ? row.path : row.path.replace(":name", encodeURIComponent(name));
  const answer = await callGateway(row.method, path, body);
  if (answer.status !== 200)
    throw new GatewayCallbackFailed(`${row.method} ${row.path}: the gateway answered ${answer.status}`);
  const parsed = (row.answer as z.ZodType).safeParse(answer.body);
  if (!parsed.success)
    throw new GatewayCallbackFailed(`${row.method} ${row.path}: the answer did not match its contract`);
  return parsed.data as GatewayCallbackAnswer<N>;
}

/** The handlers of the operations under one path prefix ("/apps/", "/secrets/", ...). */
export type HandlersUnder<P extends string> = {
  [N in BridgeOperationName as N extends `${"GET" | "POST"} ${P}${string}` ? N : never]: BridgeHandlers[N];
};
