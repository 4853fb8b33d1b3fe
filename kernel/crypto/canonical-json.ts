// One canonical JSON form for everything that is hashed or MACed: security-log rows,
// consent digests and document revisions. Changing it by one byte makes every stored
// security-log row unverifiable, so canonical-json.test.ts pins its output.
//
// Rules (RFC 8785 JCS for the values these documents hold): no whitespace; object members
// sorted by key comparing UTF-16 code units; strings and numbers exactly as JSON.stringify
// writes them; arrays keep their order. As in JSON.stringify, an undefined member is left
// out and an undefined array item is null. Non-finite numbers, functions, symbols and
// bigints throw, so a document can never mean two different things.

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** Serialises a JSON value canonically. */
export function canonicalJson(value: unknown): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (!Number.isFinite(value)) throw new TypeError("canonical JSON has no non-finite numbers");
      return JSON.stringify(value);
    case "string":
      return JSON.stringify(value);
    case "object": {
      if (Array.isArray(value))
        return `[${value.map((item) => (item === undefined ? "null" : canonicalJson(item))).join(",")}]`;
      const record = value as Record<string, unknown>;
      const keys = Object.keys(record)
        .filter((key) => record[key] !== undefined)
        .sort();
      return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(",")}}`;
    }
    default:
      throw new TypeError(`canonical JSON cannot hold a ${typeof value}`);
  }
}
