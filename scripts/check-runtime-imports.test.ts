// The one-runtime-per-folder check that `npm test` runs: it passes this repository and fails
// a tree where a folder imports the other runtime.
import { describe, expect, it } from "vitest";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const script = fileURLToPath(new URL("./check-runtime-imports.mjs", import.meta.url));

function treeWith(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "pc-imports-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe("the runtime import check", () => {
  it("passes this repository", () => {
    expect(execFileSync(process.execPath, [script], { encoding: "utf8" })).toContain(
      "every folder keeps to its runtime",
    );
  });

  it.each([
    ["workers/x.ts", 'import { readFileSync } from "node:fs";', "workers/ runs in workerd"],
    ["durable/y/index.ts", 'import path from "path";', "durable/ runs in workerd"],
    ["host-bridge/z.ts", 'import { DurableObject } from "cloudflare:workers";', "host-bridge/ runs in Node"],
    ["kernel/contracts/c.ts", 'import { Hono } from "hono";', "the kernel imports nothing but zod"],
    ["workers/guards/g.ts", 'import type { RouteRow } from "../routes/define";', "guards/ sit below routes/"],
    ["workers/proxy/p.ts", 'import { readJsonBody } from "../routes/read-input";', "proxy/ sits below routes/"],
  ])("fails when %s imports across its boundary", (file, line, why) => {
    const root = treeWith({ [file]: `${line}\n` });
    try {
      const result = spawnSync(process.execPath, [script, root], { encoding: "utf8" });
      expect(result.status).toBe(1);
      expect(result.stderr).toContain(`${file}:1`);
      expect(result.stderr).toContain(why);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
