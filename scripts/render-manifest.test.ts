import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { manifestFields, renderManifestMarkdown } from "./render-manifest";

describe("the app.json reference", () => {
  it("is the committed docs/manifest.md, byte for byte (regenerate with npm run docs:manifest)", () => {
    const committed = readFileSync(join(import.meta.dirname, "..", "docs", "manifest.md"), "utf8");
    expect(renderManifestMarkdown()).toBe(committed);
  });

  it("documents every field the schema parses: a new field without words fails here", () => {
    const undocumented = manifestFields()
      .filter((f) => f.description === "")
      .map((f) => f.path);
    expect(undocumented).toEqual([]);
  });

  it("lists nested fields of lists and maps, and marks required ones", () => {
    const byPath = new Map(manifestFields().map((f) => [f.path, f]));
    expect(byPath.get("name")?.required).toBe(true);
    expect(byPath.get("crons[].schedule")?.required).toBe(true);
    expect(byPath.get("mcpServers.<name>.command")?.required).toBe(false);
    expect(byPath.get("permissions.network")?.byDefault).toBe("no network");
    expect(byPath.get("backend.healthCheck")?.byDefault).toBe("/health");
  });
});
