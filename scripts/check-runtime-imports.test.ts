// The layer check that `npm test` runs: it passes this repository and fails a tree where a
// folder imports the other runtime, a layer imports one above it, or an import closes a cycle.
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
      "every folder keeps to its runtime and its layer, and no import closes a cycle",
    );
  });

  it.each([
    ["workers/x.ts", 'import { readFileSync } from "node:fs";', "workers/ runs in workerd"],
    ["durable/y/index.ts", 'import path from "path";', "durable/ runs in workerd"],
    ["host-bridge/z.ts", 'import { DurableObject } from "cloudflare:workers";', "host-bridge/ runs in Node"],
    ["kernel/contracts/c.ts", 'import { Hono } from "hono";', "the kernel imports nothing but zod"],
    ["kernel/contracts/d.ts", 'import { Cron } from "croner";', "croner is read in kernel/time/ only"],
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

  // An upward import names a file that exists: the checker resolves it to find its layer.
  it.each([
    [
      "durable/app-registry/index.ts",
      "workers/proxy/fire-job.ts",
      'import { fireJob } from "../../workers/proxy/fire-job";',
      "durable/ imports only the kernel",
    ],
    [
      "durable/event-hub/index.ts",
      "workers/app-registry.ts",
      'import type { Grants } from "../../workers/app-registry";',
      "durable/ imports only the kernel",
    ],
    [
      "kernel/contracts/m.ts",
      "durable/env.ts",
      'import type { Env } from "../../durable/env";',
      "the kernel imports nothing but zod",
    ],
    [
      "host-bridge/cli/s.ts",
      "workers/routes/table.ts",
      'import { ROUTES } from "../../workers/routes/table";',
      "host-bridge/ imports only the kernel",
    ],
    [
      "workers/lifecycle/install.ts",
      "workers/routes/apps.ts",
      'import { readReview } from "../routes/apps";',
      "the worker's services sit below",
    ],
  ])("fails when %s imports upward (%s)", (file, target, line, why) => {
    const root = treeWith({ [file]: `// planted\n${line}\n`, [target]: "export const x = 1;\n" });
    try {
      const result = spawnSync(process.execPath, [script, root], { encoding: "utf8" });
      expect(result.status).toBe(1);
      expect(result.stderr).toContain(`${file}:2 imports`);
      expect(result.stderr).toContain(why);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("lets a worker service name a route's request type, and fails the same import as a value", () => {
    const typed = treeWith({
      "workers/lifecycle/install.ts": 'import type { RouteRequest } from "../routes/row";\n',
      "workers/routes/row.ts": "export type RouteRequest = { path: string };\n",
    });
    const valued = treeWith({
      "workers/lifecycle/install.ts": 'import { RouteRequest } from "../routes/row";\n',
      "workers/routes/row.ts": "export const RouteRequest = 1;\n",
    });
    try {
      expect(spawnSync(process.execPath, [script, typed], { encoding: "utf8" }).status).toBe(0);
      const result = spawnSync(process.execPath, [script, valued], { encoding: "utf8" });
      expect(result.status).toBe(1);
      expect(result.stderr).toContain("workers/lifecycle/install.ts:1 imports ../routes/row");
    } finally {
      rmSync(typed, { recursive: true, force: true });
      rmSync(valued, { recursive: true, force: true });
    }
  });

  it.each([
    [
      "inside a layer",
      {
        "kernel/contracts/a.ts": 'import { b } from "./b";\nexport const a = b;\n',
        "kernel/contracts/b.ts": 'import { c } from "../rules/c";\nexport const b = c;\n',
        "kernel/rules/c.ts": '// c\nimport { a } from "../contracts/a";\nexport const c = () => a;\n',
      },
      "kernel/rules/c.ts:2 closes an import cycle: kernel/contracts/a.ts -> kernel/contracts/b.ts -> kernel/rules/c.ts -> kernel/contracts/a.ts",
    ],
    [
      "through the worker's entry",
      {
        "workers/index.ts": 'export * from "./durable-objects";\n',
        "workers/durable-objects.ts": 'import { x } from "./index";\nexport const y = x;\n',
      },
      "workers/index.ts:1 closes an import cycle: workers/durable-objects.ts -> workers/index.ts -> workers/durable-objects.ts",
    ],
  ])("fails on a value-import cycle %s, naming the file that closes it", (_where, files, problem) => {
    const root = treeWith(files);
    try {
      const result = spawnSync(process.execPath, [script, root], { encoding: "utf8" });
      expect(result.status).toBe(1);
      expect(result.stderr).toContain(problem);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("does not count a cycle of type-only imports (types are erased)", () => {
    const root = treeWith({
      "durable/env.ts": 'import type { Store } from "./store";\nexport interface Env { s: Store }\n',
      "durable/store.ts": 'import type { Env } from "./env";\nexport class Store { env?: Env }\n',
    });
    try {
      expect(spawnSync(process.execPath, [script, root], { encoding: "utf8" }).status).toBe(0);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
