import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderReviewWords } from "./render-review-words";

describe("the dashboard's review words", () => {
  it("are the committed web/review-words.js, byte for byte (regenerate with npm run web:review-words)", () => {
    const committed = readFileSync(join(import.meta.dirname, "..", "web", "review-words.js"), "utf8");
    expect(renderReviewWords()).toBe(committed);
  });
});
