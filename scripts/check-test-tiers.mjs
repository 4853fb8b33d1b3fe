// Every test file runs in exactly one tier, held by `npm test`. The tiers are the vitest projects
// of vitest.config.ts; a file no project claims would never run, a file two claim would run
// twice, and a path a tier names that no longer exists means a renamed file fell into another
// tier by its folder. Vitest itself says which project takes which file, so this checks the
// very selection `vitest run --project <tier>` makes. Each problem is one line.
import { existsSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { createVitest } from "vitest/node";

const root = fileURLToPath(new URL("..", import.meta.url));
const SKIPPED_FOLDERS = new Set(["node_modules", ".git", "dist"]);
const GLOB_MAGIC = /[*?{}[\]!]/;

/** Every *.test.ts under the repository, outside dependencies and build output. */
function testFilesOnDisk(dir = root) {
  const files = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory() && !SKIPPED_FOLDERS.has(entry.name)) files.push(...testFilesOnDisk(join(dir, entry.name)));
    else if (entry.isFile() && entry.name.endsWith(".test.ts")) files.push(relative(root, join(dir, entry.name)));
  }
  return files;
}

const vitest = await createVitest("test", { watch: false, config: join(root, "vitest.config.ts"), root });
const problems = [];
try {
  const tiersOf = new Map(testFilesOnDisk().map((file) => [file, []]));
  for (const spec of await vitest.globTestSpecifications()) {
    const file = relative(root, spec.moduleId);
    if (!tiersOf.has(file)) tiersOf.set(file, []);
    tiersOf.get(file).push(spec.project.name);
  }
  for (const [file, tiers] of tiersOf) {
    if (tiers.length === 0) problems.push(`${file} is in no tier: no project of vitest.config.ts runs it`);
    if (tiers.length > 1)
      problems.push(`${file} is in ${tiers.length} tiers (${tiers.join(", ")}): it would run twice`);
  }
  for (const project of vitest.projects)
    for (const path of [...project.config.include, ...project.config.exclude])
      if (!GLOB_MAGIC.test(path) && !existsSync(join(root, path)))
        problems.push(`the ${project.name} tier names ${path}, which does not exist`);
  if (problems.length === 0) {
    const counts = [...vitest.projects].map(
      (project) => `${project.name} ${[...tiersOf.values()].filter((tiers) => tiers[0] === project.name).length}`,
    );
    console.log(`${tiersOf.size} test files, each in one tier: ${counts.join(", ")}`);
  }
} finally {
  await vitest.close();
}
for (const problem of problems) console.error(`check-test-tiers: ${problem}`);
process.exitCode = problems.length === 0 ? 0 : 1;
