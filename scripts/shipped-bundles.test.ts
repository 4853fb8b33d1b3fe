// Tests and benchmarks do not ship: the bundles the product runs (dist/*.js, dist/*.mjs) hold
// no test route, no seam header, no pause file and no bench hook, while the test build
// (dist/test/) holds each of them — so a name that stopped being compiled out is caught.
import { describe, expect, it } from "vitest";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
// @ts-expect-error -- the build script is plain JavaScript without declarations
import { buildIfStale } from "./build.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const testRouteSource = readFileSync(join(root, "test", "build", "test-routes.ts"), "utf8");
const TEST_ROUTE_PATHS = [...testRouteSource.matchAll(/path: "([^"]+)"/g)].map((match) => match[1]!);
const SEAMS = ["x-test-now", "x-test-fail", "test-pause-at"];
const BENCH_HOOKS = ["benchAppend", "bench_unchained_scratch"];

function bundlesIn(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => /\.(m?js)$/.test(name))
    .map((name) => join(dir, name));
}

describe("the shipped bundles", () => {
  it("name every test route of the test build", () => {
    expect(TEST_ROUTE_PATHS).toEqual(expect.arrayContaining(["/api/test/throw", "/api/test/events/publish"]));
  });

  it("hold no test route path, seam header, pause file or bench hook; the test build holds each", async () => {
    await buildIfStale();
    const shipped = bundlesIn(join(root, "dist"));
    expect(shipped.map((file) => file.slice(root.length))).toEqual(
      expect.arrayContaining(["dist/worker.js", "dist/cli.mjs"]),
    );
    for (const file of shipped) {
      const text = readFileSync(file, "utf8").toLowerCase();
      for (const name of [...TEST_ROUTE_PATHS, ...SEAMS, ...BENCH_HOOKS])
        expect(text.includes(name.toLowerCase()), `${file} contains ${name}`).toBe(false);
    }
    const testBuild = bundlesIn(join(root, "dist", "test"))
      .map((file) => readFileSync(file, "utf8").toLowerCase())
      .join("\n");
    for (const name of [...TEST_ROUTE_PATHS, ...SEAMS])
      expect(testBuild.includes(name.toLowerCase()), `the test build lacks ${name}`).toBe(true);
  });
});
