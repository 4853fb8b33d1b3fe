import { describe, expect, it } from "vitest";
import { canonicalJson, type JsonValue } from "./canonical-json";

describe("canonical JSON", () => {
  it("sorts keys at every depth and writes no whitespace", () => {
    const a = { b: 1, a: { z: [3, { y: true, x: null }], c: "s" } };
    expect(canonicalJson(a)).toBe('{"a":{"c":"s","z":[3,{"x":null,"y":true}]},"b":1}');
  });

  it("is the same for the same value whatever order its keys were written in", () => {
    const one = { kind: "k", detail: { p: [1, 2], q: { m: "x", n: "y" } }, seq: 4 };
    const two = { seq: 4, detail: { q: { n: "y", m: "x" }, p: [1, 2] }, kind: "k" };
    expect(canonicalJson(one)).toBe(canonicalJson(two));
  });

  it("keeps array order, since an array's order is part of its meaning", () => {
    expect(canonicalJson([2, 1])).not.toBe(canonicalJson([1, 2]));
  });

  it("orders keys by UTF-16 code units and escapes strings as JSON.stringify does", () => {
    expect(canonicalJson({ b: 1, B: 2, é: 3, "\u{1F600}": 4, "": 5 })).toBe('{"":5,"B":2,"b":1,"é":3,"\u{1F600}":4}');
    expect(canonicalJson('line\n"quote"\u0001')).toBe('"line\\n\\"quote\\"\\u0001"');
  });

  it("writes numbers in their shortest round-trip form, -0 as 0", () => {
    expect(canonicalJson([1e21, 0.1, -0, 1.5e-7, 100])).toBe("[1e+21,0.1,0,1.5e-7,100]");
  });

  it("survives a parse round trip byte for byte", () => {
    const value: JsonValue = { n: 0.30000000000000004, s: "ü\u2028", a: [{ b: [] }, {}], t: false };
    const text = canonicalJson(value);
    expect(canonicalJson(JSON.parse(text) as JsonValue)).toBe(text);
  });

  it("refuses values that are not plain JSON and leaves out undefined members as JSON does", () => {
    expect(() => canonicalJson(Number.NaN)).toThrow(TypeError);
    expect(() => canonicalJson(10n as unknown as JsonValue)).toThrow(TypeError);
    expect(canonicalJson({ b: 1, a: undefined, c: [undefined] })).toBe('{"b":1,"c":[null]}');
  });
});
