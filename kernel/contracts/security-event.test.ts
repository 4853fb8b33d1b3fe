// The events route's query text is the log's own query with numbers read from text: the same
// fields, the same bounds, and nothing else.
import { describe, expect, it } from "vitest";
import { MAX_QUERY_LIMIT, SecurityEventQuerySchema, SecurityEventQueryTextSchema } from "./security-event";

describe("the security events query as URL text", () => {
  it("has exactly the log query's fields", () => {
    expect(Object.keys(SecurityEventQueryTextSchema.shape).sort()).toEqual(
      Object.keys(SecurityEventQuerySchema.shape).sort(),
    );
  });

  it("reads numbers from text, keeps the bounds, and refuses a field the log does not know", () => {
    expect(SecurityEventQueryTextSchema.parse({ before_seq: "12", limit: "20", outcome: "refused" })).toEqual({
      before_seq: 12,
      limit: 20,
      outcome: "refused",
    });
    expect(SecurityEventQueryTextSchema.safeParse({ limit: String(MAX_QUERY_LIMIT + 1) }).success).toBe(false);
    expect(SecurityEventQueryTextSchema.safeParse({ since: "yesterday" }).success).toBe(false);
    expect(SecurityEventQueryTextSchema.safeParse({ order: "asc" }).success).toBe(false);
  });
});
