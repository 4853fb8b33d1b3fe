// One `npm run bench` run's shared state, made once: the settings read from the command line,
// the scratch folder every process it starts works in, the stops to run before it exits, and
// the figures and raw measurements the report prints. Every section takes it as `bench`.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ratio, summarize } from "./stats.mjs";

/** Every section, in the order `--only` names them by default. */
export const SECTIONS = [
  "proxy",
  "auth",
  "tail",
  "runtime",
  "install",
  "sel",
  "start",
  "start30",
  "backends",
  "update",
  "events",
  "broker",
  "secrets",
  "mcp",
  "add",
  "backup",
  "link",
];

/** Reads the command line and makes the scratch folder; the bench's one run. */
export function startBenchRun() {
  const { values: argv } = parseArgs({
    options: {
      json: { type: "boolean", default: false },
      runs: { type: "string", default: "3" },
      duration: { type: "string", default: "4" },
      only: { type: "string", default: SECTIONS.join(",") },
      "json-out": { type: "string" },
    },
  });
  const DURATION_S = Math.max(1, Math.min(30, Number(argv.duration) || 4));
  const only = new Set(
    argv.only
      .split(",")
      .map((s) => s.trim())
      .filter((s) => SECTIONS.includes(s)),
  );
  const bench = {
    argv,
    RUNS: Math.max(3, Math.min(10, Number(argv.runs) || 3)),
    DURATION_S,
    LATENCY_DURATION_S: Math.max(1, Math.round(DURATION_S / 2)),
    CONNECTIONS: 10,
    /** The tail section's load: an authenticated owner read beside a bare workerd hello, p99 and max. */
    TAIL_CONNECTIONS: 50,
    only,
    wants: (s) => only.has(s),
    log: (line) => process.stderr.write(`bench: ${line}\n`),
    scratch: mkdtempSync(join(tmpdir(), "personalclaw-bench-")),
    /** Stops for every process started, run last-first when the bench ends or is interrupted. */
    cleanups: [],
    benchStarted: process.hrtime.bigint(),
    benchStartedAt: new Date().toISOString(),
    figures: [],
    raw: {},
  };
  /** Records one figure: the subject's and the baseline's medians with their spread, and their ratio. */
  bench.figure = (section, name, unit, subject, baseline, baselineName, extra = {}) => {
    const s = summarize(subject);
    const b = baseline ? summarize(baseline) : null;
    bench.figures.push({
      section,
      name,
      unit,
      subject: s,
      baselineName,
      baseline: b,
      ratio: b ? ratio(s.median, b.median) : null,
      ...extra,
    });
  };
  return bench;
}
