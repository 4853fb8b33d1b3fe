// Runs the Python SDK's own unittest suite and the vector generator's drift check, so
// `npm test` covers them. The HTTP behaviour shared with the Node SDK is in
// ../signed-backends.test.ts.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const here = fileURLToPath(new URL(".", import.meta.url));
const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", PYTHONDONTWRITEBYTECODE: "1" };

describe("Python SDK", () => {
  it("passes its unittest suite", () => {
    const run = spawnSync("python3", ["-m", "unittest", "-v", "test_verify"], {
      cwd: here,
      env,
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(run.stderr).toMatch(/\nOK\n?$/);
    expect(run.stderr).toMatch(/Ran (1[0-9]|[2-9][0-9]) tests/);
    expect(run.status).toBe(0);
  });

  it("test-vectors.json is exactly what generate_test_vectors.py produces", () => {
    const run = spawnSync("python3", ["../generate_test_vectors.py", "--check"], { cwd: here, env, encoding: "utf8" });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
  });
});
