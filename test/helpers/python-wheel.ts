// Builds a pure-Python wheel for a test (there is no package index here): every file of
// `sourceDir` at its relative path, plus the dist-info pip needs, with
// test/fixtures/python-wheels/build_wheel.py. Answers the wheel's path.
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { repoRoot } from "./gateway";

export function buildWheel(outDir: string, name: string, version: string, sourceDir: string): string {
  const script = join(repoRoot, "test", "fixtures", "python-wheels", "build_wheel.py");
  return execFileSync("python3", [script, outDir, name, version, sourceDir], { encoding: "utf8" }).trim();
}
