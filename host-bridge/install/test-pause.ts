// The test build's step pause: a transition whose step <home>/test-pause-at names
// ("<op>:<step>:<status>") stops there while the file still names it, so a suite can kill the
// gateway, or workerd alone, at exactly that step, and then let the transition go on by
// removing the file. Only `if (TEST_BUILD)` branches call it, so no shipped bundle holds it.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

function names(pauseAt: string, step: string): boolean {
  try {
    return existsSync(pauseAt) && readFileSync(pauseAt, "utf8").trim() === step;
  } catch {
    return false;
  }
}

/** Waits while `<home>/test-pause-at` names `step`; resolves at once otherwise. */
export async function pauseAtNamedStep(home: string, step: string, log: (line: string) => void): Promise<void> {
  const pauseAt = join(home, "test-pause-at");
  if (!names(pauseAt, step)) return;
  log(`bridge: paused at ${step} (test build)`);
  while (names(pauseAt, step)) await sleep(50);
  log(`bridge: resumed at ${step} (test build)`);
}
