// The remembered router answers exactly what Hono's trie answers, for the gateway's own table.
// It reads the route table, so it is typechecked with the worker's types (tsconfig.worker.json's files).
import { describe, expect, it } from "vitest";
import { TrieRouter } from "hono/router/trie-router";
import { ROUTES } from "./table";
import { RememberedMatches } from "./remembered-matches";

function routers() {
  const trie = new TrieRouter<string>();
  const remembered = new RememberedMatches<string>();
  for (const row of ROUTES) {
    trie.add(row.method, row.path, `${row.method} ${row.path}`);
    remembered.add(row.method, row.path, `${row.method} ${row.path}`);
  }
  return { trie, remembered };
}

const METHODS = ["GET", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "HEAD"];

/** Every route's path with its params filled in, a few ways, and paths that match nothing. */
function corpus(): string[] {
  const paths = new Set<string>(["/", "/index.html", "/api", "/api/", "/apps", "/apps/x", "/nowhere/at/all"]);
  for (const row of ROUTES) {
    for (const fill of ["a", "node-notes", "parked", "grants", "x1"]) {
      const path = row.path.replace(/:[a-z]+/gi, fill).replace(/\*$/, `${fill}/deep/er`);
      paths.add(path);
      paths.add(`${path}/extra`);
      paths.add(path.replace(/\/$/, ""));
    }
  }
  return [...paths];
}

describe("RememberedMatches", () => {
  it("answers what the trie answers for every route, filled in, and for paths that match nothing, asked twice", () => {
    const { trie, remembered } = routers();
    let matched = 0;
    for (let round = 0; round < 2; round++)
      for (const method of METHODS)
        for (const path of corpus()) {
          const expected = trie.match(method, path);
          expect(remembered.match(method, path), `${method} ${path}`).toEqual(expected);
          if (expected[0].length > 0) matched++;
        }
    // The corpus must reach routes with params and wildcards, not only misses.
    expect(matched).toBeGreaterThan(ROUTES.length);
  });

  it("remembers a bounded number of answers whatever a flood of new paths and methods asks", () => {
    const { trie, remembered } = routers();
    for (let i = 0; i < 5_000; i++) {
      const method = i % 7 === 0 ? `M${i % 40}` : "GET";
      const path = `/apps/app-${i}/api/${i}`;
      expect(remembered.match(method, path)).toEqual(trie.match(method, path));
      expect(remembered.size).toBeLessThanOrEqual(16 * 512);
    }
    expect(remembered.size).toBeLessThanOrEqual(1_024);
  });
});
