// Renders an install review (InstallReviewSchema, kernel/contracts/install-review.ts) in the order the owner must read
// it: what the app needs first, what it is granted (network hosts, enforced), what runs
// (backend, UI, hooks), what the scan found, and the digest the Install button consents to.
// Every field is read defensively: a review from a newer gateway still renders.
import { el, listOf } from "./element.js";
import { compactJson, formatCommand } from "./format.js";
import { FINDINGS_WORDS, GRANT_WORDS } from "./review-words.js";
import { sourcePart } from "./source-review-part.js";

function part(title, ...content) {
  return el("section", { class: "review-part" }, el("h4", { text: title }), content);
}

function none(text) {
  return el("p", { class: "muted", text });
}

function terms(pairs) {
  const shown = pairs.filter(
    ([, value]) =>
      value !== null && value !== undefined && value !== false && !(Array.isArray(value) && value.length === 0),
  );
  if (shown.length === 0) return null;
  return el(
    "dl",
    { class: "terms" },
    shown.map(([label, value]) =>
      el(
        "div",
        {},
        el("dt", { text: label }),
        el(
          "dd",
          {},
          Array.isArray(value)
            ? el(
                "ul",
                { class: "chips" },
                value.map((v) => el("li", { class: "mono", text: compactJson(v) })),
              )
            : typeof value === "object" && value instanceof Node
              ? value
              : el("span", { text: value === true ? "yes" : compactJson(value) }),
        ),
      ),
    ),
  );
}

function commandLine(c) {
  return el("code", { class: "command-line", text: formatCommand(c?.command, c?.args) });
}

function requiresPart(review) {
  const items = listOf(review.prerequisites);
  return part(
    "Needs first",
    items.length === 0
      ? none("Nothing beyond PersonalClaw itself.")
      : el(
          "ul",
          { class: "prerequisites" },
          items.map((r) =>
            typeof r === "string"
              ? el("li", { text: r })
              : el(
                  "li",
                  {},
                  el("strong", { text: r.name ?? "unnamed" }),
                  r.why ? ` — ${r.why}` : "",
                  r.how ? el("div", {}, "How: ", el("code", { text: r.how })) : null,
                ),
          ),
        ),
  );
}

function networkTerm(network) {
  if (!network || typeof network !== "object") return null;
  const hosts = Array.isArray(network.hosts) ? network.hosts : [];
  const what = hosts.length === 0 ? "none: no network at all" : hosts.join(", ");
  return el(
    "span",
    {},
    el("span", { class: "badge", text: "enforced" }),
    " ",
    what,
    network.note ? el("div", { class: "muted", text: network.note }) : null,
  );
}

/** A granted permission's value as the review shows it; null when nothing is granted. */
function grantValue(kind, value) {
  if (kind === "flag") return value === true;
  if (kind === "tier") return value ?? null;
  if (kind === "list") return listOf(value);
  return null;
}

// Every permission the review (and the consent digest) carries, under the label the terminal
// review shows too (review-words.js, generated from the manifest schema).
function permissionsPart(review) {
  const p = review.permissions && typeof review.permissions === "object" ? review.permissions : {};
  const shown = terms(
    GRANT_WORDS.filter((g) => g.kind !== "hosts").map((g) => [g.label, grantValue(g.kind, p[g.field])]),
  );
  const networkWords = GRANT_WORDS.find((g) => g.kind === "hosts");
  const network = networkWords ? networkTerm(p[networkWords.field]) : null;
  return part(
    "Permissions",
    shown ?? none("No permissions."),
    network && networkWords ? terms([[networkWords.label, network]]) : null,
  );
}

/** Secrets the app asks for: each reaches it only if you assign one; who holds it and where it goes. */
function secretsPart(review) {
  const asked = listOf(review.secrets);
  if (asked.length === 0) return null;
  return part(
    "Secrets it asks for",
    el(
      "ul",
      { class: "secrets-asked" },
      asked.map((s) =>
        el(
          "li",
          { "data-holds-value": s?.appHoldsValue === true },
          el("code", { text: String(s?.name ?? "") }),
          " — ",
          el("span", { text: String(s?.why ?? "") }),
          s?.note ? el("p", { class: "secret-holding", text: String(s.note) }) : null,
        ),
      ),
    ),
    el("p", {
      class: "muted",
      text: "None is given until you assign one in Secrets; the backend then gets it as an environment variable when it starts.",
    }),
  );
}

function backendPart(review) {
  const b = review.backend;
  if (!b) return part("Backend", none("No backend process."));
  return part(
    "Backend",
    terms([
      ["Runs", commandLine(b)],
      ["Entry point", b.entryPoint ?? null],
      ["Health check", b.healthCheck ?? null],
    ]),
  );
}

function uiPart(review) {
  const ui = review.ui;
  if (!ui) return part("UI", none("No UI."));
  const pages = listOf(ui.pages).map((pg) => (pg.title ? `${pg.title} (${pg.entryPoint})` : pg.entryPoint));
  return part(
    "UI",
    terms([
      ["Entry", ui.entry ?? null],
      ["Pages", pages],
    ]) ?? none("A UI with no entry."),
  );
}

function hookTerm(hook) {
  if (!hook) return null;
  return el(
    "span",
    {},
    commandLine(hook),
    typeof hook.timeoutSeconds === "number"
      ? el("span", { class: "muted", text: ` (stopped after ${hook.timeoutSeconds} s)` })
      : null,
  );
}

function hooksPart(review) {
  const update = review.updateHook;
  const shown = terms([
    ["On install", hookTerm(review.installHook)],
    ["On uninstall", hookTerm(review.uninstallHook)],
    ["On update", update && update.declared ? "declared; never run (install hook re-runs on update)" : null],
  ]);
  return part("Hooks", shown ?? none("No install or uninstall hooks."));
}

function otherPart(review) {
  const npm = review.npmPackages && typeof review.npmPackages === "object" ? review.npmPackages : {};
  const shown = terms([
    [
      "Scheduled jobs",
      listOf(review.scheduledJobs).map(
        (j) =>
          `${j.name} ${j.schedule}${j.timezone && j.timezone !== "UTC" ? ` ${j.timezone}` : ""}${j.route ? ` → POST ${j.route}` : ""}${j.enabled === false ? " (off)" : ""}${j.registers === false ? (j.route ? " — not registered: needs permissions.cron" : " — not registered: needs cron and an agent tier") : ""}`,
      ),
    ],
    [
      "MCP servers (run in the app's sandbox)",
      listOf(review.mcpServers).map(
        (s) =>
          `${s.name}: ${s.url ? `${s.url} (remote)` : formatCommand(s.command, s.args)}${listOf(s.envNames).length ? ` (env ${s.envNames.join(", ")})` : ""}`,
      ),
    ],
    [
      "Launches",
      listOf(review.launches).map(
        (l) => `${l.program} — ${l.why}${listOf(l.hosts).length ? ` (hosts ${l.hosts.join(", ")})` : ""}`,
      ),
    ],
    ["Writes", listOf(review.writes).map((w) => `${w.path} — ${w.why}`)],
    ["Python packages", listOf(review.pythonPackages)],
    ["npm packages", listOf(npm.packages)],
    ["npm note", listOf(npm.packages).length ? (npm.note ?? null) : null],
    ["Unrecognised manifest keys", listOf(review.unrecognisedManifestKeys)],
  ]);
  return shown ? part("Also", shown) : null;
}

function findingsTable(caption, findings) {
  return el(
    "table",
    { class: "findings-table" },
    el("caption", { text: caption }),
    el(
      "thead",
      {},
      el(
        "tr",
        {},
        ["Severity", "Rule", "Where", "What"].map((h) => el("th", { scope: "col", text: h })),
      ),
    ),
    el(
      "tbody",
      {},
      findings.map((f) =>
        el(
          "tr",
          {},
          el(
            "td",
            {},
            el("span", {
              class: `badge ${f.severity === "dangerous" ? "badge-bad" : "badge-warn"}`,
              text: f.severity ?? "?",
            }),
          ),
          el("td", { class: "mono", text: f.rule ?? "" }),
          el("td", { class: "mono wrap", text: f.line ? `${f.path}:${f.line}` : (f.path ?? "") }),
          el("td", { class: "wrap", text: f.message ?? "" }),
        ),
      ),
    ),
  );
}

/** The findings part; exported so a refused preview (scan_dangerous) can show its findings. */
export function findingsPart(findings, verdict) {
  const runtime = listOf(findings?.runtime);
  const tests = listOf(findings?.tests);
  const flat = Array.isArray(findings) ? findings : [];
  const tone = verdict === "clean" ? "ok" : verdict === "dangerous" ? "bad" : "warn";
  return part(
    "Scan findings",
    verdict ? el("p", {}, "Verdict: ", el("span", { class: `badge badge-${tone}`, text: verdict })) : null,
    runtime.length + tests.length + flat.length === 0 ? none("The scan found nothing.") : null,
    runtime.length ? findingsTable(FINDINGS_WORDS.runtime, runtime) : null,
    tests.length ? findingsTable(FINDINGS_WORDS.tests, tests) : null,
    flat.length ? findingsTable("Findings", flat) : null,
  );
}

/** Data an earlier install of this name left parked: shown with whose it is, adopted only when ticked. */
function keptDataPart(review) {
  const kept = review.keptData && typeof review.keptData === "object" ? review.keptData : null;
  if (!kept) return null;
  return part(
    "Kept data",
    el("p", {
      text: `This name has kept data from ${kept.version ?? "an unrecorded version"} of ${kept.parkedAt ?? "an unrecorded date"}.`,
    }),
    kept.note ? el("p", { class: "muted", text: kept.note }) : null,
    el(
      "label",
      {},
      el("input", { type: "checkbox", class: "adopt-data" }),
      " Adopt this kept data (otherwise the app starts with an empty data/ and the kept data stays parked)",
    ),
  );
}

/** The whole review with its digest. */
export function installReview(review, digest) {
  const app = review.app && typeof review.app === "object" ? review.app : {};
  const title = app.displayName ? `${app.displayName} (${app.name})` : (app.name ?? "this app");
  return el(
    "div",
    { class: "review" },
    el(
      "h3",
      { class: "review-title" },
      `Review: ${title}`,
      app.version ? el("span", { class: "muted", text: ` version ${app.version}` }) : null,
    ),
    app.description ? el("p", { text: app.description }) : null,
    sourcePart(review),
    requiresPart(review),
    permissionsPart(review),
    secretsPart(review),
    backendPart(review),
    uiPart(review),
    hooksPart(review),
    keptDataPart(review),
    otherPart(review),
    findingsPart(review.findings, review.verdict),
    part(
      "Consent digest",
      el("p", {}, el("code", { class: "digest", text: digest ?? "missing" })),
      el("p", {
        class: "muted",
        text: "Install consents to exactly these bytes and this review; if the folder changes, you will be asked again.",
      }),
    ),
  );
}
