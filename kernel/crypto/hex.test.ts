import { describe, expect, it } from "vitest";
import { hexOf } from "./hex";
import { xorshift } from "../../bench/lib/seeded-random.mjs";

describe("hexOf", () => {
  it("spells any bytes as Node spells them in hex, whatever length came before", () => {
    const next = xorshift(7);
    // Long ones grow the reused buffer; the short ones after must not keep its older digits.
    for (const length of [0, 1, 32, 200, 31, 64, 3, 1000, 0, 33]) {
      const bytes = Uint8Array.from({ length }, () => next() & 255);
      expect(hexOf(bytes)).toBe(Buffer.from(bytes).toString("hex"));
    }
    expect(hexOf(Uint8Array.from([0, 15, 16, 255]))).toBe("000f10ff");
  });
});
