// What an update changes, in words: the version, the app's files (its consent digest) and each
// disclosure field that differs from the review the owner consented to, as what is added and
// what is removed rather than two JSON values.
import { el } from "./element.js";
import { compactJson, formatCommand } from "./format.js";
import { GRANT_WORDS } from "./review-words.js";

/** The review's own label for each disclosure field an update can change (permissions come from GRANT_WORDS). */
const FIELD_LABELS = {
  prerequisites: "Needs installed first",
  scheduledJobs: "Scheduled jobs",
  pythonPackages: "Python packages",
  npmPackages: "npm packages",
  npmClosure: "Pinned npm packages",
  mcpRegistryEntry: "MCP Registry entry",
  ui: "Its pages",
  backend: "Backend it runs",
  installHook: "Install hook",
  uninstallHook: "Uninstall hook",
  mcpServers: "MCP servers",
  launches: "Programs it launches",
  writes: "Files it writes outside its data",
  secrets: "Secrets it asks for",
  findings: "Scan findings",
  mcpbBundle: ".mcpb bundle",
};

const MAX_TEXT = 200;

function clip(text) {
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT - 1)}…` : text;
}

/** The label a change's field reads under. */
export function changeLabel(field) {
  const name = String(field);
  if (name.startsWith("permissions.")) {
    const key = name.slice("permissions.".length);
    return GRANT_WORDS.find((w) => w.field === key)?.label ?? key;
  }
  return FIELD_LABELS[name] ?? name;
}

/** One entry of a listed field as a person reads it: its name, command, path or rule. */
function entryText(value) {
  if (value === null || value === undefined) return "none";
  if (typeof value !== "object") return String(value);
  if (typeof value.rule === "string") return `${value.rule} in ${value.path}${value.line ? `:${value.line}` : ""}`;
  if (typeof value.program === "string") return value.program;
  if (typeof value.command === "string" && typeof value.name !== "string")
    return formatCommand(value.command, value.args);
  if (typeof value.name === "string") {
    const more = [value.schedule, value.transport, value.why].filter((v) => typeof v === "string");
    return more.length ? `${value.name} (${more[0]})` : value.name;
  }
  if (typeof value.path === "string") return value.path;
  if (typeof value.entryPoint === "string") return value.entryPoint;
  return compactJson(value);
}

/** A field's value as a list of entries, when it is one (a plain list, or the one list an object wraps). */
function entriesOf(field, value) {
  if (Array.isArray(value)) return value.map(entryText);
  if (value === null || value === undefined) return [];
  if (typeof value !== "object") return null;
  if (field === "permissions.network") return Array.isArray(value.hosts) ? value.hosts.map(String) : [];
  if (field === "npmPackages") return Array.isArray(value.packages) ? value.packages.map(String) : [];
  if (field === "findings")
    return [
      ...(Array.isArray(value.runtime) ? value.runtime.map(entryText) : []),
      ...(Array.isArray(value.tests) ? value.tests.map((f) => `${entryText(f)} (a test file)`) : []),
    ];
  return null;
}

/** A value that is not a list, in one line. */
function valueText(value) {
  if (value === null || value === undefined || value === false) return value === false ? "no" : "none";
  if (value === true) return "yes";
  if (typeof value !== "object") return String(value);
  if (typeof value.command === "string") {
    const check = typeof value.healthCheck === "string" ? `, health check ${value.healthCheck}` : "";
    return `${formatCommand(value.command, value.args)}${check}`;
  }
  if ("entry" in value || "pages" in value) {
    const pages = Array.isArray(value.pages) ? value.pages.map(entryText) : [];
    return [value.entry ? `entry ${value.entry}` : null, ...pages].filter(Boolean).join(", ") || "none";
  }
  return compactJson(value);
}

/** One change as words: "adds a, b; removes c", or "before → after". */
export function changeText(change) {
  const before = entriesOf(change.field, change.before);
  const after = entriesOf(change.field, change.after);
  if (before && after) {
    const added = after.filter((item) => !before.includes(item));
    const removed = before.filter((item) => !after.includes(item));
    const parts = [];
    if (added.length) parts.push(`adds ${added.join(", ")}`);
    if (removed.length) parts.push(`removes ${removed.join(", ")}`);
    return clip(parts.length ? parts.join("; ") : "the same entries, changed in detail");
  }
  return clip(`${valueText(change.before)} → ${valueText(change.after)}`);
}

const FILE_VERBS = [
  ["added", "adds"],
  ["changed", "changes"],
  ["removed", "removes"],
];

/**
 * The update's files against the installed copy's, as the gateway answers them (`files`: each
 * path already through its text-safety rules, at most 20 a list, with totals): "adds a, b;
 * changes c; removes d and 3 more".
 */
export function filesText(files) {
  const parts = [];
  for (const [kind, verb] of FILE_VERBS) {
    const total = Number(files.totals?.[kind] ?? 0);
    if (!total) continue;
    const listed = Array.isArray(files[kind]) ? files[kind].map(String) : [];
    parts.push(`${verb} ${listed.join(", ")}${total > listed.length ? ` and ${total - listed.length} more` : ""}`);
  }
  return parts.length ? parts.join("; ") : "the same files it runs now";
}

/**
 * What an update changes: its version, its files and each disclosure field, one line each.
 * `installed` is the app as listed (version, consentDigest), or null when unknown.
 */
export function changeList(preview, installed) {
  const review = preview.review && typeof preview.review === "object" ? preview.review : {};
  const nextVersion = review.app?.version ?? "unknown";
  const items = [];
  if (installed?.version !== undefined)
    items.push([
      "Version",
      installed.version === nextVersion ? `stays ${nextVersion}` : `${installed.version} → ${nextVersion}`,
    ]);
  if (preview.files && typeof preview.files === "object") items.push(["Its files", filesText(preview.files)]);
  else if (installed?.consentDigest !== undefined)
    items.push([
      "Its files",
      installed.consentDigest === preview.digest
        ? "the same files it runs now"
        : "new files (the consent digest changes; the whole review is below)",
    ]);
  const changes = Array.isArray(preview.changes) ? preview.changes : [];
  for (const c of changes) items.push([changeLabel(c.field), changeText(c)]);
  if (changes.length === 0) items.push(["What it gets", "nothing it is granted, runs or reaches changes"]);
  return el(
    "ul",
    { class: "update-changes" },
    items.map(([label, text]) => el("li", {}, el("strong", { text: label }), `: ${text}`)),
  );
}
