import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { InstallReviewSchema } from "./install-review";

// The dashboard is plain JS: what it reads of a review is checked against the schema here, so a
// field it shows the owner is always one the bridge builds and the consent digest covers.
const web = (file: string) => readFileSync(join(__dirname, "..", "..", "web", file), "utf8");

function fieldsRead(source: string, name: string): string[] {
  const reads = source.matchAll(new RegExp(`(?<![\\w./-])${name}\\??\\.([A-Za-z_]+)`, "g"));
  return [...new Set([...reads].map((match) => match[1]!))].sort();
}

describe("the dashboard's install review", () => {
  const reviewFiles = ["install-review.js", "apps-section.js", "update-control.js"];

  it("reads only fields InstallReviewSchema has", () => {
    const known = Object.keys(InstallReviewSchema.shape);
    const read = reviewFiles.flatMap((file) => fieldsRead(web(file), "review"));
    expect(read.length).toBeGreaterThan(10);
    expect(read.filter((field) => !known.includes(field))).toEqual([]);
  });

  it("shows the permissions through the generated review words, never a list of its own", () => {
    const source = web("install-review.js");
    expect(source).toMatch(/import \{[^}]*GRANT_WORDS[^}]*\} from "\.\/review-words\.js"/);
    expect(fieldsRead(source, "p")).toEqual([]);
  });

  it("a field the schema lacks is caught", () => {
    expect(fieldsRead("const x = review.requires ?? review?.app;", "review")).toEqual(["app", "requires"]);
  });
});
