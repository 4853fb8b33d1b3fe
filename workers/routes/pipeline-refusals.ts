// The refusals the request pipeline (pipeline.ts and the guards it runs) gives around a
// route's handler. Some reach every route; the rest follow from the row itself: who may call
// it, whether the internal credential opens it, and whether it reads a body or a query. A row
// lists only what its own handler adds, so this is the one place these are written down.
import { z } from "zod";
import type { ErrorCode } from "../../kernel/contracts/errors";
import type { Authorization } from "../authorization";

/** The fields of a route row the pipeline's refusals follow from. */
export interface RowShape {
  authz: Authorization;
  internal: boolean;
  body?: z.ZodType;
  query?: z.ZodType;
  rawBody?: boolean;
}

/**
 * Refusals any request can meet, whatever row it reaches: the Host and Origin guard, the one
 * parse of path, Authorization and cookie, body framing, a `?token=` sign-in link exchanged
 * on any path, a Bearer that cannot authorize, an owner credential sent through an app
 * backend's door, a full disk and a fault.
 */
export const EVERY_ROUTE_REFUSALS: readonly ErrorCode[] = [
  "host_not_allowed",
  "origin_not_allowed",
  "request_path_ambiguous",
  "auth_header_malformed",
  "auth_cookie_conflict",
  "bad_request",
  "auth_credential_conflict",
  "session_expired",
  "session_required",
  "session_signed_out",
  "auth_bearer_invalid",
  "backend_door_owner_credential",
  "storage_full",
  "internal_error",
];

const SIGNED_OUT: readonly ErrorCode[] = ["session_required", "session_expired", "session_signed_out"];

function authorizationRefusals(authz: Authorization): readonly ErrorCode[] {
  switch (authz.kind) {
    case "bootstrap":
    case "answer-rule":
      return [];
    case "owner":
    case "app-may":
      // The permission gate judges every app principal, owner-only rows included.
      return [...SIGNED_OUT, "app_not_permitted"];
    case "internal-only":
      return [...SIGNED_OUT, "internal_only_route", "app_not_permitted"];
  }
}

/** True when a JSON Schema accepts a boolean somewhere: the input reader refuses a non-boolean there with its own code. */
function acceptsBoolean(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.some(acceptsBoolean);
  if (schema === null || typeof schema !== "object") return false;
  const type = (schema as { type?: unknown }).type;
  if (type === "boolean" || (Array.isArray(type) && type.includes("boolean"))) return true;
  return Object.values(schema).some(acceptsBoolean);
}

function inputRefusals(schema: z.ZodType, isBody: boolean): readonly ErrorCode[] {
  const codes: ErrorCode[] = isBody ? ["body_too_large", "unsupported_media_type", "bad_request"] : ["bad_request"];
  if (acceptsBoolean(z.toJSONSchema(schema, { io: "input", unrepresentable: "any" })))
    codes.push("field_not_a_boolean");
  return codes;
}

/**
 * The refusals the pipeline gives this row because of what the row says, in the order its
 * steps run; a code may also be in EVERY_ROUTE_REFUSALS (a body this row reads is one more
 * way to meet `bad_request`).
 */
export function pipelineRefusals(row: RowShape): ErrorCode[] {
  const codes: ErrorCode[] = row.internal
    ? ["internal_secret_invalid", "internal_call_names_no_work"]
    : ["internal_route_refused"];
  codes.push(...authorizationRefusals(row.authz));
  if (row.body && !row.rawBody) codes.push(...inputRefusals(row.body, true));
  if (row.query) codes.push(...inputRefusals(row.query, false));
  return [...new Set(codes)];
}
