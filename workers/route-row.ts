// The shape of one row of the route table. Everything about a route — how it is reached,
// who may call it, what it accepts and what it promises — is data in its row.
import type { Context } from "hono";
import type { z } from "zod";
import type { ErrorCode } from "../kernel/contracts/errors";
import type { Env } from "../durable/env";
import type { Principal } from "./guards/principal";
import type { ParsedRequest } from "./guards/parsed-request";
import type { AuditInput } from "../durable/security-log/audit";
import type { Authorization } from "./authorization";

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS";

export type RouteFamily =
  | "status"
  | "auth"
  | "security-log"
  | "apps"
  | "app-proxy"
  | "messaging"
  | "internal"
  | "events"
  | "approvals"
  | "settings"
  | "secrets"
  | "mcp"
  | "jobs"
  | "durability"
  | "edge";

/**
 * What a route answers when it succeeds: a JSON body matching `schema` with `status` (200
 * unless said), or, for a route whose answer is not one JSON document (a proxied backend, a
 * socket upgrade, a served file), what it streams instead.
 */
export type RouteAnswer = { status?: 200 | 201 | 202 | 204; schema: z.ZodType } | { streamed: string };

export interface GatewayVars {
  principal: Principal;
  now: number;
  /** The one parse of path, Authorization and session cookie every later step reads. */
  parsed: ParsedRequest;
}
export type GatewayContext = Context<{ Bindings: Env; Variables: GatewayVars }>;

export interface RouteRequest<Body, Query> {
  c: GatewayContext;
  env: Env;
  principal: Principal;
  params: Record<string, string>;
  body: Body;
  query: Query;
  now: number;
  audit: (entry: AuditInput) => Promise<void>;
}

export interface RouteRow<Body = unknown, Query = unknown> {
  method: HttpMethod;
  path: string;
  family: RouteFamily;
  /** Required on every row: a route without one cannot be registered, so no write route is ever undeclared. */
  authz: Authorization;
  /** Whether the internal credential (X-Internal-Secret) opens this route. */
  internal: boolean;
  body?: z.ZodType<Body>;
  query?: z.ZodType<Query>;
  /** Raw routes read their own body (the reverse proxy streams it). */
  rawBody?: boolean;
  contract: string;
  /** Required on every row, so no route reaches the reference without its success shape. */
  answer: RouteAnswer;
  /** The refusals this route's handler adds to the ones the pipeline gives every row like it (pipeline-refusals.ts). */
  refuses: ErrorCode[];
  handle: (req: RouteRequest<Body, Query>) => Promise<Response | object>;
}

/** A row of any body and query shape, as the table holds them; each row's handler is typed where the row is declared. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a handler's parameter types are contravariant, so only `any` admits every row
export type AnyRouteRow = RouteRow<any, any>;

/** Declares a route row with its body and query types inferred from the schemas. */
export function route<Body = undefined, Query = undefined>(row: RouteRow<Body, Query>): RouteRow<Body, Query> {
  return row;
}
