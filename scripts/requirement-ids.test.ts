// Every requirement ID a source file, test or design note cites (AUTH-07, PROXY-02, ...) is one
// docs/requirements.md lists, so a citation can always be looked up and a renumbered or
// invented ID fails here. Only the catalogue's own families count as IDs (UTF-8 or SHA-256 do not).
import { describe, expect, it } from "vitest";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const FOLDERS = ["kernel", "workers", "durable", "host-bridge", "web", "apps", "scripts", "bench", "test", "docs"];
const SKIPPED = new Set(["node_modules", "fixtures", "vendor", "dist"]);

function catalogue(text: string): { families: Set<string>; ids: Set<string> } {
  const ids = new Set([...text.matchAll(/^- \*\*([A-Z]+-\d+)\*\*/gm)].map((m) => m[1]!));
  return { ids, families: new Set([...ids].map((id) => id.split("-")[0]!)) };
}

function* files(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    if (SKIPPED.has(name)) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* files(path);
    else if (/\.(ts|mjs|js|cjs|md)$/.test(name) && !path.endsWith(join("docs", "requirements.md"))) yield path;
  }
}

/** Each citation of a catalogue family's ID that the catalogue does not list, as "file:line ID". */
function unknownCitations(
  sources: Iterable<[name: string, text: string]>,
  known: ReturnType<typeof catalogue>,
): string[] {
  const unknown: string[] = [];
  for (const [name, text] of sources) {
    for (const match of text.matchAll(/\b([A-Z]{2,6})-(\d{1,3})\b/g)) {
      if (!known.families.has(match[1]!)) continue;
      const id = `${match[1]}-${match[2]!.padStart(2, "0")}`;
      if (!known.ids.has(id) && !known.ids.has(match[0])) {
        unknown.push(`${name}:${text.slice(0, match.index).split("\n").length} ${match[0]}`);
      }
    }
  }
  return unknown;
}

const known = catalogue(readFileSync(join(root, "docs", "requirements.md"), "utf8"));

describe("requirement IDs", () => {
  it("the catalogue lists the families the code cites", () => {
    expect(known.ids.size).toBeGreaterThan(300);
    for (const family of ["AUTH", "INT", "PERM", "PROXY", "BACK", "INST", "MAN", "SEL", "SBX", "WS", "EVT", "MCP"])
      expect(known.families.has(family)).toBe(true);
  });

  it("every ID cited in the repository is listed in docs/requirements.md", () => {
    const sources = FOLDERS.flatMap((folder) =>
      [...files(join(root, folder))].map(
        (path) => [relative(root, path), readFileSync(path, "utf8")] as [string, string],
      ),
    );
    expect(sources.length).toBeGreaterThan(300);
    expect(unknownCitations(sources, known)).toEqual([]);
  });

  it("finds a citation the catalogue does not list, and leaves other words with dashes alone", () => {
    const invented = ["PROXY", "999"].join("-"); // spelled apart, so this file cites no unknown ID itself
    const planted: [string, string][] = [
      ["workers/x.ts", `// AUTH-07 holds\n// ${invented} does not; UTF-8, SHA-256\n`],
    ];
    expect(unknownCitations(planted, known)).toEqual([`workers/x.ts:2 ${invented}`]);
  });
});
