// A build leaves nothing running: `personalclaw start` builds when a source is newer than dist/,
// and the esbuild service that build starts (a process of 300 MiB once it has built the
// bundles) must not live on beside the gateway. The build runs in a copy of the tree, so the
// dist/ other tests read is never rewritten under them.
import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

// The child builds, then names every process it still has as a child, by command line.
const BUILD_THEN_LIST_CHILDREN = `
import { readdirSync, readFileSync } from "node:fs";
const { buildAll } = await import(process.argv[1]);
await buildAll();
const children = readdirSync("/proc/self/task").flatMap((task) =>
  readFileSync("/proc/self/task/" + task + "/children", "utf8").split(" ").filter(Boolean));
const commands = children.map((pid) => {
  try { return readFileSync("/proc/" + pid + "/cmdline", "utf8").split("\\0").join(" ").trim(); } catch { return ""; }
}).filter(Boolean);
console.log(JSON.stringify(commands));
`;

describe("the build", () => {
  it("stops the esbuild service it started once the bundles are written", () => {
    const tree = mkdtempSync(join(tmpdir(), "pc-build-"));
    try {
      // scripts/ is copied (build.mjs finds the tree from its own path); the sources are linked.
      cpSync(join(root, "scripts"), join(tree, "scripts"), { recursive: true });
      cpSync(join(root, "package.json"), join(tree, "package.json"));
      for (const name of ["kernel", "workers", "durable", "host-bridge", "test", "node_modules"])
        symlinkSync(join(root, name), join(tree, name));
      const out = execFileSync(
        process.execPath,
        ["--input-type=module", "-e", BUILD_THEN_LIST_CHILDREN, join(tree, "scripts", "build.mjs")],
        { cwd: tree, encoding: "utf8", timeout: 120_000 },
      );
      expect(existsSync(join(tree, "dist", "worker.js"))).toBe(true);
      expect(existsSync(join(tree, "dist", "test", "cli.mjs"))).toBe(true);
      const running = JSON.parse(out.trim().split("\n").at(-1)!) as string[];
      expect(running.filter((command) => command.includes("esbuild"))).toEqual([]);
    } finally {
      rmSync(tree, { recursive: true, force: true });
    }
  }, 150_000);
});
