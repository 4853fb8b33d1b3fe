// Turning caller input into plain JSON before it is MACed with the one canonical form in
// kernel/crypto/canonical-json.ts.
import type { JsonObject, JsonValue } from "../../kernel/crypto/canonical-json";

/** Deepest nesting kept in a detail; anything below is replaced by a marker, which also ends cycles. */
export const MAX_DETAIL_DEPTH = 16;
export const TOO_DEEP = "[too deep]";

/**
 * Turns any value a caller handed over RPC into plain JSON, the way JSON.stringify would
 * (undefined members dropped, undefined/function items and non-finite numbers become null,
 * a Date becomes its ISO string), plus: a bigint becomes its decimal string and nesting
 * below MAX_DETAIL_DEPTH becomes "[too deep]".
 */
export function toJsonValue(input: unknown, depth = 0): JsonValue {
  if (input === null || input === undefined) return null;
  switch (typeof input) {
    case "boolean":
    case "string":
      return input;
    case "number":
      return Number.isFinite(input) ? input : null;
    case "bigint":
      return input.toString();
    case "object": {
      if (depth >= MAX_DETAIL_DEPTH) return TOO_DEEP;
      if (input instanceof Date) return Number.isNaN(input.getTime()) ? null : input.toISOString();
      if (Array.isArray(input)) return input.map((item) => toJsonValue(item, depth + 1));
      const out: JsonObject = {};
      for (const [key, member] of Object.entries(input as Record<string, unknown>)) {
        if (member === undefined || typeof member === "function" || typeof member === "symbol") continue;
        setMember(out, key, toJsonValue(member, depth + 1));
      }
      return out;
    }
    default:
      return null;
  }
}

/** Sets an own member even for the key "__proto__", which plain assignment would turn into a prototype change. */
export function setMember(target: JsonObject, key: string, value: JsonValue): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
