// Set up before every file of the unit tier (vitest.config.ts). A unit test answers in-process,
// so a child process it starts, however deep in the code under test (a spawn, an exec, a fork,
// esbuild's service), fails the file with the command it started: such a file belongs in the
// integration tier, which the edit-sized `npm run test:unit` does not wait for.
import childProcess from "node:child_process";
import { syncBuiltinESMExports } from "node:module";
import { afterAll } from "vitest";

const STARTERS = ["spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "fork"] as const;
const started: string[] = [];

for (const name of STARTERS) {
  const original = childProcess[name] as (...args: unknown[]) => unknown;
  Object.assign(childProcess, {
    [name](this: unknown, ...args: unknown[]) {
      started.push(`${name}(${JSON.stringify(args[0])})`);
      return original.apply(this, args);
    },
  });
}
// `import { spawn } from "node:child_process"` elsewhere sees the wrapper too.
syncBuiltinESMExports();

afterAll(() => {
  if (started.length > 0)
    throw new Error(
      `this unit test started a child process (${started.join(", ")}); a test that does belongs in INTEGRATION in vitest.config.ts`,
    );
});
