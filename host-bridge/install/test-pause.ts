// The test build's step pause: a transition whose step <home>/test-pause-at names
// ("<op>:<step>:<status>") stops there for good, so a suite can kill the gateway at exactly
// that step. Only `if (TEST_BUILD)` branches call it, so no shipped bundle holds it.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** Never resolves when `<home>/test-pause-at` names `step`; resolves at once otherwise. */
export async function pauseAtNamedStep(home: string, step: string, log: (line: string) => void): Promise<void> {
  const pauseAt = join(home, "test-pause-at");
  if (!existsSync(pauseAt) || readFileSync(pauseAt, "utf8").trim() !== step) return;
  log(`bridge: paused at ${step} (test build)`);
  await new Promise(() => {});
}
