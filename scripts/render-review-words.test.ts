import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { renderReviewWords, SOURCE_SUMMARY_MARK } from "./render-review-words";
import { sourceSummary } from "../kernel/contracts/source-review";
import { SOURCE_REVIEWS } from "../test/helpers/source-reviews";

const committedPath = join(import.meta.dirname, "..", "web", "review-words.js");

describe("the dashboard's review words", () => {
  it("are the committed web/review-words.js, byte for byte (regenerate with npm run web:review-words)", () => {
    // The summary's function is compiled differently here and by the build: its behaviour is compared below.
    const words = (text: string) => text.slice(0, text.indexOf(SOURCE_SUMMARY_MARK));
    const committed = readFileSync(committedPath, "utf8");
    expect(committed).toContain(SOURCE_SUMMARY_MARK);
    expect(words(renderReviewWords())).toBe(words(committed));
  });

  it("summarise every kind of package source as the terminal's review does", async () => {
    const web = (await import(pathToFileURL(committedPath).href)) as { sourceSummary: typeof sourceSummary };
    for (const { name, review } of SOURCE_REVIEWS)
      expect(web.sourceSummary(review), name).toEqual(sourceSummary(review));
  });
});
