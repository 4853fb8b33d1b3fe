// `npm run bench`: what each layer of PersonalClaw costs against the nearest honest baseline,
// measured in the same run on the same machine. Prints a table (or with --json one JSON
// document) of medians over --runs runs with their min-max spread. Results are printed, never
// asserted. Every process it starts is its own child on loopback, stopped before it exits.
// Each section measures in its own module (bench/sections/); this runner runs the wanted ones
// in a fixed order and prints what they recorded.
//
//   node bench/run.mjs [--json] [--json-out FILE] [--runs 3] [--duration 4] [--only proxy,auth,tail,runtime,install,sel,start,start30,backends,update,events,broker,secrets,mcp,add,backup,link]
import { rmSync, writeFileSync } from "node:fs";
import { msSince } from "./lib/procs.mjs";
import { startBenchRun } from "./lib/bench-run.mjs";
import { machine, table } from "./lib/report.mjs";
import { targetsOf } from "./lib/targets.mjs";
import { loadavg } from "node:os";
import { loadSections } from "./sections/load.mjs";
import { runtimeFigures, runtimeStartups } from "./sections/runtime.mjs";
import { installSection } from "./sections/install.mjs";
import { selSection } from "./sections/sel.mjs";
import { startSection } from "./sections/start.mjs";
import { backendsSection } from "./sections/backends.mjs";
import { eventsSection } from "./sections/events.mjs";
import { updateSection } from "./sections/update.mjs";
import { secretsSection } from "./sections/secrets.mjs";
import { brokerSection } from "./sections/broker.mjs";
import { start30Section } from "./sections/start30.mjs";
import { mcpSection } from "./sections/mcp.mjs";
import { addSection } from "./sections/add.mjs";
import { backupSection } from "./sections/backup.mjs";
import { linkSection } from "./sections/link.mjs";

const bench = startBenchRun();
const { wants, cleanups, raw } = bench;

/**
 * The sections in the order they run: which `--only` names want each step, and the step. A new
 * section is one row here and one name in SECTIONS (lib/bench-run.mjs).
 */
function steps() {
  let runtime = null;
  return [
    [["proxy", "auth", "runtime", "tail"], () => loadSections(bench)],
    [["runtime", "start"], async () => void (runtime = await runtimeStartups(bench))],
    [["runtime"], async () => runtimeFigures(bench, runtime)],
    [["install"], () => installSection(bench)],
    [["sel"], () => selSection(bench)],
    [["start"], () => startSection(bench, runtime)],
    [["start30"], () => start30Section(bench)],
    [["backends"], () => backendsSection(bench)],
    [["events"], () => eventsSection(bench)],
    [["update"], () => updateSection(bench)],
    [["broker"], () => brokerSection(bench)],
    [["secrets"], () => secretsSection(bench)],
    [["mcp"], () => mcpSection(bench)],
    [["add"], () => addSection(bench)],
    [["backup"], () => backupSection(bench)],
    [["link"], () => linkSection(bench)],
  ];
}

/** Runs the wanted sections in order, timing each; every process they started is stopped and the scratch folder removed, whatever happens. */
async function runSections() {
  raw.sectionSeconds = {};
  try {
    for (const [names, run] of steps()) {
      if (!names.some(wants)) continue;
      const started = process.hrtime.bigint();
      await run();
      const label = names.filter(wants).join(",");
      raw.sectionSeconds[label] = (raw.sectionSeconds[label] ?? 0) + msSince(started) / 1000;
    }
  } finally {
    for (const stop of cleanups.reverse()) await stop().catch(() => undefined);
    rmSync(bench.scratch, { recursive: true, force: true });
  }
}

async function main() {
  const notes = [];
  const loadBefore = loadavg();
  await runSections();
  if (raw.nginxSkipped) notes.push(raw.nginxSkipped);
  if (raw.loadWarnings) notes.push(`some load runs saw failures: ${raw.loadWarnings.join("; ")}`);
  const doc = {
    date: bench.benchStartedAt,
    machine: { ...machine(), loadAverageBefore: loadBefore, loadAverageAfter: loadavg() },
    settings: {
      runs: bench.RUNS,
      durationS: bench.DURATION_S,
      latencyDurationS: bench.LATENCY_DURATION_S,
      connections: bench.CONNECTIONS,
      sections: [...bench.only],
    },
    figures: bench.figures,
    targets: targetsOf(bench.figures),
    notes,
    raw,
    elapsedS: msSince(bench.benchStarted) / 1000,
  };
  if (bench.argv["json-out"]) writeFileSync(bench.argv["json-out"], `${JSON.stringify(doc, null, 2)}\n`);
  if (bench.argv.json) process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
  else process.stdout.write(`${table(doc)}\n`);
}

const onSignal = async () => {
  for (const stop of cleanups.reverse()) await stop().catch(() => undefined);
  rmSync(bench.scratch, { recursive: true, force: true });
  process.exit(130);
};
process.once("SIGINT", onSignal);
process.once("SIGTERM", onSignal);

await main();
