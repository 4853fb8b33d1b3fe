import { describe, expect, it } from "vitest";
import { z } from "zod";
import { schemaOutline } from "./schema-outline";

describe("a JSON Schema as a nested list", () => {
  it("lists each field with its type, presence and bounds, nested fields indented", () => {
    const schema = z.toJSONSchema(
      z.strictObject({
        name: z.string().min(1).max(64),
        limit: z.number().int().min(1).max(500).optional(),
        outcome: z.enum(["allowed", "refused"]),
        owner: z.strictObject({ id: z.string() }).nullable(),
        tags: z.array(z.strictObject({ key: z.string() })),
      }),
    );
    expect(schemaOutline("Body", schema)).toEqual([
      "- Body: object",
      "  - `name`: string, required, 1–64 characters",
      "  - `limit`: integer, optional, ≥ 1, ≤ 500",
      '  - `outcome`: string, required, one of `"allowed"`, `"refused"`',
      "  - `owner`: object or null, required",
      "    - variant 1: object",
      "      - `id`: string, required",
      "    - variant 2: null",
      "  - `tags`: array of object, required",
      "    - `key`: string, required",
    ]);
  });

  it("says an object without fields is empty, and leaves out the bounds every safe integer has", () => {
    expect(schemaOutline("Body", z.toJSONSchema(z.strictObject({})))).toEqual(["- Body: an empty object"]);
    expect(schemaOutline("Answer 200", z.toJSONSchema(z.strictObject({ n: z.number().int() })))).toEqual([
      "- Answer 200: object",
      "  - `n`: integer, required",
    ]);
  });
});
