// A build leaves nothing running: `personalclaw start` builds when a source is newer than dist/,
// and the esbuild service that build starts (a process of 300 MiB once it has built the
// bundles) must not live on beside the gateway. Nor does it leave earlier builds' chunks behind
// while no process runs the CLI. The build runs in a copy of the tree, so the dist/ other tests
// read is never rewritten under them.
import { describe, expect, it } from "vitest";
import { execFileSync, spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
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
  it("stops the esbuild service it started once the bundles are written, and removes earlier builds' chunks", async () => {
    const tree = mkdtempSync(join(tmpdir(), "pc-build-"));
    try {
      // scripts/ is copied (build.mjs finds the tree from its own path); the sources are linked.
      cpSync(join(root, "scripts"), join(tree, "scripts"), { recursive: true });
      cpSync(join(root, "package.json"), join(tree, "package.json"));
      for (const name of ["kernel", "workers", "durable", "host-bridge", "test", "node_modules"])
        symlinkSync(join(root, name), join(tree, name));
      // An earlier build's chunks, in both bundles' folders.
      mkdirSync(join(tree, "dist", "test"), { recursive: true });
      for (const old of ["dist/chunk-OLDBUILD.mjs", "dist/chunk-OLDBUILD.mjs.map", "dist/test/chunk-OLDBUILD.mjs"])
        writeFileSync(join(tree, old), "export {};\n");
      const out = execFileSync(
        process.execPath,
        ["--input-type=module", "-e", BUILD_THEN_LIST_CHILDREN, join(tree, "scripts", "build.mjs")],
        { cwd: tree, encoding: "utf8", timeout: 120_000 },
      );
      expect(existsSync(join(tree, "dist", "worker.js"))).toBe(true);
      expect(existsSync(join(tree, "dist", "test", "cli.mjs"))).toBe(true);
      const running = JSON.parse(out.trim().split("\n").at(-1)!) as string[];
      expect(running.filter((command) => command.includes("esbuild"))).toEqual([]);
      const chunks = (dir: string) => readdirSync(join(tree, dir)).filter((n) => n.startsWith("chunk-"));
      expect(chunks("dist").some((n) => n.includes("OLDBUILD"))).toBe(false);
      expect(chunks("dist/test").some((n) => n.includes("OLDBUILD"))).toBe(false);
      expect(chunks("dist").length).toBeGreaterThan(0);
      // While a process runs this tree's CLI, old chunks are kept: it may still import them.
      const runsElsewhere = () =>
        execFileSync(
          process.execPath,
          [
            "--input-type=module",
            "-e",
            "const m = await import(process.argv[1]); console.log(m.cliRunsElsewhere())",
            join(tree, "scripts", "build.mjs"),
          ],
          { encoding: "utf8" },
        ).trim();
      expect(runsElsewhere()).toBe("false");
      const gateway = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)", join(tree, "dist", "cli.mjs")]);
      try {
        expect(runsElsewhere()).toBe("true");
      } finally {
        gateway.kill("SIGKILL");
      }
    } finally {
      rmSync(tree, { recursive: true, force: true });
    }
  }, 150_000);
});
