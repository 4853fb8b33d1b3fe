// Builds a pure-Python wheel for a test (there is no package index here): every file of
// `sourceDir` at its relative path, plus the dist-info pip needs (Requires-Dist lines and
// console scripts when given), with test/fixtures/python-wheels/build_wheel.py. Answers the
// wheel's path.
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { repoRoot } from "./gateway";

export function buildWheel(
  outDir: string,
  name: string,
  version: string,
  sourceDir: string,
  more: { requires?: string[]; scripts?: string[] } = {},
): string {
  const script = join(repoRoot, "test", "fixtures", "python-wheels", "build_wheel.py");
  const options = [
    ...(more.requires ?? []).flatMap((r) => ["--requires", r]),
    ...(more.scripts ?? []).flatMap((s) => ["--script", s]),
  ];
  return execFileSync("python3", [script, outDir, name, version, sourceDir, ...options], { encoding: "utf8" }).trim();
}
