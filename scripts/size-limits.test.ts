// The size limits lint holds over every source file of the repository: a planted file over 500
// lines or a function over 120 fails `eslint .`, wherever in the product, web/, apps/, bench/
// or scripts/ it lies; tests are apart; the exceptions are the short named list in eslint.config.mjs.
import { describe, expect, it } from "vitest";
import { ESLint } from "eslint";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const eslint = new ESLint({ cwd: root });

async function sizeProblems(filePath: string, text: string): Promise<string[]> {
  const [result] = await eslint.lintText(text, { filePath });
  return result!.messages.filter((m) => m.ruleId?.startsWith("max-lines")).map((m) => m.ruleId!);
}

const longFile = Array.from({ length: 600 }, (_, i) => `export const line${i} = ${i};`).join("\n") + "\n";
const longFunction = `export function long(): number {\n  let n = 0;\n${"  n += 1;\n".repeat(130)}  return n;\n}\n`;

describe("size limits", () => {
  it.each([
    "workers/planted.ts",
    "host-bridge/cli/planted.ts",
    "kernel/contracts/planted.ts",
    "bench/planted.mjs",
    "web/planted.js",
    "scripts/planted.mjs",
  ])("a 600-line file and a 130-line function fail lint in %s", async (file) => {
    expect(await sizeProblems(file, longFile)).toEqual(["max-lines"]);
    expect(await sizeProblems(file, longFunction)).toEqual(["max-lines-per-function"]);
  });

  it("holds tests apart and lists at most ten exceptions, each a file, never a folder", async () => {
    expect(await sizeProblems("test/planted.test.ts", longFile)).toEqual([]);
    const config = (await import(new URL("../eslint.config.mjs", import.meta.url).href)).default as Array<{
      files?: string[];
      rules?: Record<string, unknown>;
    }>;
    const exceptions = config
      .filter((entry) => entry.rules?.["max-lines"] === "off" || entry.rules?.["max-lines-per-function"] === "off")
      .flatMap((entry) => entry.files ?? []);
    expect(exceptions.length).toBeGreaterThan(0);
    expect(exceptions.length).toBeLessThanOrEqual(10);
    for (const file of exceptions) expect(file).toMatch(/^[\w./-]+\.(ts|mjs|js)$/);
  });
});
