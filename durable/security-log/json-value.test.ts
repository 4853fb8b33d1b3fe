// Caller input becomes plain JSON before the log MACs it in the kernel's canonical form.
import { describe, expect, it } from "vitest";
import { canonicalJson, type JsonValue } from "../../kernel/crypto/canonical-json";
import { MAX_DETAIL_DEPTH, TOO_DEEP, toJsonValue } from "./json-value";

describe("a detail as plain JSON", () => {
  it("turns caller input into plain JSON the way JSON.stringify would", () => {
    const when = new Date("2025-01-02T03:04:05.678Z");
    expect(toJsonValue({ a: undefined, b: [undefined, Infinity], c: when, d: 12n, f: () => 1 })).toEqual({
      b: [null, null],
      c: "2025-01-02T03:04:05.678Z",
      d: "12",
    });
  });

  it("keeps a '__proto__' key as an ordinary member", () => {
    const parsed = JSON.parse('{"__proto__":{"x":1}}') as unknown;
    expect(canonicalJson(toJsonValue(parsed))).toBe('{"__proto__":{"x":1}}');
  });

  it("cuts nesting below the depth limit, which also ends a cycle", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    let value = toJsonValue(cyclic);
    for (let depth = 0; depth < MAX_DETAIL_DEPTH; depth++) value = (value as Record<string, JsonValue>).self!;
    expect(value).toBe(TOO_DEEP);
  });
});
