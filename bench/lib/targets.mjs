// The targets of issue 43, read from the figures of the same run: each one's value, its
// bound and whether this run met it. Printed after the table and carried in --json; never
// asserted (a shared machine's run is evidence, not a gate). A target whose figure a run did
// not measure (its section not wanted, or not there yet) says so.

/** A figure of `section` whose name matches `name` and whose baseline matches `baseline` (regexes). */
function find(figures, section, name, baseline = /./) {
  return figures.find((f) => f.section === section && name.test(f.name) && baseline.test(f.baselineName ?? "")) ?? null;
}

const at = (f) => f?.subject.median ?? null;
const added = (f) => (f && f.baseline ? f.subject.median - f.baseline.median : null);
const ratioOf = (f) => f?.ratio ?? null;

/** Each target: where its figure is, what of it is read, and the bound. */
const TARGETS = [
  {
    what: "start -> first 200, no apps",
    unit: "ms",
    max: 1000,
    read: (F) => at(find(F, "start", /first 200/)) ?? baselineMedian(find(F, "start30", /first 200/)),
  },
  { what: "start -> first 200, 30 apps", unit: "ms", max: 3000, read: (F) => at(find(F, "start30", /first 200 of/)) },
  {
    what: "chained security-log appends against unchained (rows/s)",
    unit: "×",
    min: 0.8,
    read: (F) => ratioOf(find(F, "sel", /appends\/s/)),
  },
  {
    what: "chained security-log appends against unchained (CPU per row, unchained / chained)",
    unit: "×",
    min: 0.8,
    read: (F) => inverse(ratioOf(find(F, "sel", /CPU per row/))),
  },
  ...["HTTP GET through the broker", "CONNECT tunnel opened for it", "kept CONNECT tunnel"].flatMap((way) => [
    {
      what: `broker: ${way}, p50 added, 1 connection`,
      unit: "ms",
      max: 0.5,
      read: (F) => added(find(F, "broker", new RegExp(`${way}.*p50 ms, 1 connection$`))),
    },
    {
      what: `broker: ${way}, CPU per request (whole path)`,
      unit: "×",
      max: 1.2,
      read: (F) => ratioOf(find(F, "broker", new RegExp(`${way}.*CPU per request, client.*1 connection$`))),
    },
  ]),
  {
    what: "proxy CPU per request against the bare pass-through, same slot",
    unit: "×",
    max: 1.15,
    read: (F) => ratioOf(find(F, "proxy", /CPU per request/, /^bare workerd pass-through, the same socket slot$/)),
  },
  {
    what: "proxy CPU per request against the forward duties alone",
    unit: "×",
    max: 1.05,
    read: (F) => ratioOf(find(F, "proxy", /CPU per request/, /^the forward duties alone, same slot$/)),
  },
  {
    what: "proxy p50 added, 1 connection, against the pass-through",
    unit: "ms",
    max: 0.3,
    read: (F) => added(find(F, "proxy", /^p50 ms, 1 connection$/, /^bare workerd pass-through, the same socket slot$/)),
  },
  {
    what: "proxy p50, 1 connection, against nginx",
    unit: "ms",
    max: 0.3,
    read: (F) => added(find(F, "proxy", /^p50 ms, 1 connection$/, /^nginx/)),
  },
  { what: "owner read against a hello (req/s)", unit: "×", min: 0.9, read: (F) => ratioOf(find(F, "auth", /^req\/s/)) },
  {
    what: "install preview against walk + hash",
    unit: "×",
    max: 2,
    read: (F) => ratioOf(find(F, "install", /^apps preview, 10 000 files \/ 100 MiB$/)),
  },
  { what: "backup against tar", unit: "×", max: 1.5, read: (F) => ratioOf(find(F, "backup", /^personalclaw backup/)) },
  {
    what: "a proxied request through the edge's link, p50 added",
    unit: "ms",
    max: 0.5,
    read: (F) => added(find(F, "link", /, p50$/)),
  },
  {
    what: "a proxied request through the edge's link, CPU per request",
    unit: "×",
    max: 1.2,
    read: (F) => ratioOf(find(F, "link", /CPU per request/)),
  },
  {
    what: "tool call through mcp run, p50 added",
    unit: "ms",
    max: 0.5,
    read: (F) => added(find(F, "mcp", /^tool call through mcp run.*p50$/, /spawned directly/)),
  },
  {
    what: "tool call through mcp run, CPU per call (whole path)",
    unit: "×",
    max: 1.2,
    read: (F) => ratioOf(find(F, "mcp", /^tool call through mcp run.*CPU/, /spawned directly/)),
  },
];

function baselineMedian(f) {
  return f?.baseline?.median ?? null;
}

function inverse(x) {
  return x === null || x === 0 ? null : 1 / x;
}

/** The targets with this run's values: {what, unit, bound, value, met} (met null when not measured). */
export function targetsOf(figures) {
  return TARGETS.map((t) => {
    const value = t.read(figures);
    const bound = t.max !== undefined ? `≤ ${t.max}` : `≥ ${t.min}`;
    const met = value === null ? null : t.max !== undefined ? value <= t.max : value >= t.min;
    return { what: t.what, unit: t.unit, bound: `${bound} ${t.unit}`, value, met };
  });
}

/** The targets as lines under the table. */
export function targetLines(targets) {
  return targets.map((t) => {
    const value =
      t.value === null
        ? "not measured in this run"
        : `${t.value.toFixed(t.unit === "ms" && t.value >= 100 ? 0 : 2)} ${t.unit}`;
    const verdict = t.met === null ? "" : t.met ? " — met" : " — not met";
    return `target: ${t.what}: ${value} (${t.bound})${verdict}`;
  });
}
