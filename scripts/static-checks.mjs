// The checks `npm test` makes before any test runs: formatting, lint, the three type checks and
// the two layout checks. None reads another's output, so they run side by side, as many at once
// as the machine has cores (two here: about half the time of one after another). Each prints
// one line when it passes; a failing one prints everything it said, and the run exits 1 once
// all have ended, so one run shows every problem.
import { availableParallelism } from "node:os";
import { execa } from "execa";

/** Longest first, so the last to start are the short ones. */
const CHECKS = [
  ["tsc", "-p", "tsconfig.node.json"],
  ["eslint", "."],
  ["prettier", "--check", "."],
  ["tsc", "-p", "tsconfig.worker.json"],
  ["node", "scripts/check-test-tiers.mjs"],
  ["tsc", "-p", "tsconfig.web.json"],
  ["node", "scripts/check-runtime-imports.mjs"],
];

/** Runs one check; true when it passed. */
async function run(command) {
  const started = Date.now();
  const result = await execa(command[0], command.slice(1), { all: true, reject: false, preferLocal: true });
  const line = `${command.join(" ")} (${((Date.now() - started) / 1000).toFixed(1)} s)`;
  if (result.exitCode === 0) {
    console.log(`ok    ${line}`);
    return true;
  }
  console.error(`fail  ${line}, exit ${result.exitCode ?? result.signal}:\n${result.all}`);
  return false;
}

const waiting = [...CHECKS];
const runners = Array.from({ length: Math.min(availableParallelism(), CHECKS.length) }, async () => {
  let passed = true;
  for (let next = waiting.shift(); next !== undefined; next = waiting.shift()) passed = (await run(next)) && passed;
  return passed;
});
process.exitCode = (await Promise.all(runners)).every(Boolean) ? 0 : 1;
