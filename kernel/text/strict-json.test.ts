import { describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH, parseStrictJson } from "./strict-json";

describe("parseStrictJson", () => {
  it.each([
    ['{"a":1,"a":2}', "duplicate_key", "a"],
    ['{"x":{"b":1,"c":{"d":1,"d":1}}}', "duplicate_key", "d"],
    ['{"__proto__":{"admin":true}}', "forbidden_key", "__proto__"],
    ['{"p":[{"constructor":{}}]}', "forbidden_key", "constructor"],
    ['{"prototype":1}', "forbidden_key", "prototype"],
  ])("refuses %s naming the key", (text, problem, key) => {
    const r = parseStrictJson(text);
    expect(r).toMatchObject({ ok: false, problem, key });
  });

  it("refuses nesting deeper than the limit before parsing, and accepts the limit itself", () => {
    const deep = (n: number) => '{"a":'.repeat(n - 1) + "{}" + "}".repeat(n - 1);
    expect(parseStrictJson(deep(MAX_JSON_DEPTH))).toMatchObject({ ok: true });
    expect(parseStrictJson(deep(MAX_JSON_DEPTH + 1))).toMatchObject({ ok: false, problem: "too_deep" });
    expect(parseStrictJson("[".repeat(100_000) + "]".repeat(100_000))).toMatchObject({
      ok: false,
      problem: "too_deep",
    });
  });

  it("keeps the same key in sibling objects and keys inside strings", () => {
    expect(parseStrictJson('{"a":{"k":1},"b":{"k":"\\"__proto__\\""}}')).toEqual({
      ok: true,
      value: { a: { k: 1 }, b: { k: '"__proto__"' } },
    });
    expect(parseStrictJson("{not json")).toMatchObject({ ok: false, problem: "not_json" });
  });
});
