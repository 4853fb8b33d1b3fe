// What `npm run bench` prints: the machine it ran on, and the figures as one table of medians
// with their min-max spread, the baseline beside each, their ratio and the latency added.
import { execFileSync } from "node:child_process";
import { cpus, totalmem } from "node:os";
import { workerdBinary } from "./workerd.mjs";
import { nginxBinary, nginxVersion } from "./nginx.mjs";
import { targetLines } from "./targets.mjs";

/** The machine the figures were measured on. */
export function machine() {
  const read = (cmd, args) => {
    try {
      return execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
    } catch (error) {
      return String(error.stderr ?? "").trim() || null;
    }
  };
  const nginx = nginxBinary();
  return {
    nproc: Number(read("nproc", [])) || cpus().length,
    cpu: cpus()[0]?.model ?? null,
    memoryGiB: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    workerd: read(workerdBinary(), ["--version"]),
    nginx: nginx ? nginxVersion(nginx) : null,
    kernel: read("uname", ["-sr"]),
  };
}

const fmt = (x, unit) => {
  if (x === null || x === undefined) return "—";
  if (unit === "req/s" || unit === "rows/s" || unit === "frames/s")
    return x >= 100 ? Math.round(x).toLocaleString("en-US") : x.toFixed(1);
  if (unit === "cores") return x.toFixed(2);
  if (unit === "MiB" || unit === "µs/row") return x.toFixed(1);
  if (unit === "µs/request") return Math.round(x).toLocaleString("en-US");
  if (unit.startsWith("µs/") || unit.startsWith("ms CPU"))
    return x >= 100 ? Math.round(x).toLocaleString("en-US") : x.toFixed(1);
  if (unit === "%") return `${x.toFixed(0)} %`;
  if (unit === "ms") return x >= 100 ? Math.round(x).toLocaleString("en-US") : x >= 10 ? x.toFixed(1) : x.toFixed(2);
  return String(x);
};
const cell = (s, unit) => (s ? `${fmt(s.median, unit)} [${fmt(s.min, unit)}–${fmt(s.max, unit)}]` : "—");

/** The bench document as the table printed without --json. */
export function table(doc) {
  const lines = [];
  lines.push(
    `PersonalClaw bench — ${doc.date} — ${doc.machine.nproc} CPU (${doc.machine.cpu}), ${doc.machine.memoryGiB} GiB, Node ${doc.machine.node}, ${doc.machine.workerd}`,
  );
  const load = (xs) => xs.map((x) => x.toFixed(1)).join(" ");
  lines.push(
    `load average ${load(doc.machine.loadAverageBefore)} before the run, ${load(doc.machine.loadAverageAfter)} after; subject and baseline runs interleaved, CPU per unit from /proc (schedstat, stat)`,
  );
  lines.push(
    `medians of ${doc.settings.runs} runs [min–max]; load: autocannon in a child process, ${doc.settings.connections} connections for ${doc.settings.durationS} s and 1 connection for ${doc.settings.latencyDurationS} s per run`,
  );
  lines.push("");
  const header = ["section", "figure", "unit", "subject", "baseline", "baseline value", "ratio", "added"];
  const rows = doc.figures.map((f) => [
    f.section,
    f.name,
    f.unit,
    cell(f.subject, f.unit),
    f.baselineName ?? "—",
    cell(f.baseline, f.unit),
    f.ratio === null ? "—" : `${f.ratio.toFixed(2)}×`,
    f.addedMs === undefined || f.addedMs === null ? "" : `+${f.addedMs.toFixed(2)} ms`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const render = (r) => `| ${r.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
  lines.push(render(header));
  lines.push(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
  for (const r of rows) lines.push(render(r));
  lines.push("");
  lines.push(...targetLines(doc.targets));
  if (doc.notes.length > 0) {
    lines.push("");
    for (const n of doc.notes) lines.push(`note: ${n}`);
  }
  const times = Object.entries(doc.raw.sectionSeconds ?? {}).map(([name, sec]) => `${name} ${sec.toFixed(0)} s`);
  lines.push(`total bench time: ${doc.elapsedS.toFixed(0)} s (${times.join(", ")})`);
  return lines.join("\n");
}
