// Security log: the latest events with filters (kind, app, outcome, how recent) and paging, each
// event's detail as named facts rather than JSON, and chain verification.
import { el, errorNotice, replaceChildren } from "./element.js";
import { compactJson, formatTime } from "./format.js";

const PAGE_SIZE = 50;

function outcomeBadge(outcome) {
  const tone =
    outcome === "allowed"
      ? "ok"
      : outcome === "refused" || outcome === "error"
        ? "bad"
        : outcome === "timeout"
          ? "warn"
          : "neutral";
  return el("span", { class: `badge badge-${tone}`, text: outcome ?? "—" });
}

const COLUMNS = ["Seq", "Time", "Kind", "Principal", "Outcome", "Subject", "Detail"];
const DETAIL_FACTS = 8;
const FACT_CHARS = 160;

/** One value of a detail as words: a list joined, an object as its own "key value" pairs. */
function factValue(value) {
  if (value === null || value === undefined) return "none";
  if (Array.isArray(value)) return value.length === 0 ? "none" : value.map(factValue).join(", ");
  if (typeof value === "object")
    return Object.entries(value)
      .map(([k, v]) => `${k.replace(/_/g, " ")} ${factValue(v)}`)
      .join(", ");
  if (typeof value === "boolean") return value ? "yes" : "no";
  return String(value);
}

/** An event's detail as a list of named facts ("purge data: no"), never raw JSON. */
function detailFacts(detail) {
  if (detail === null || typeof detail !== "object" || Array.isArray(detail)) {
    const text = compactJson(detail);
    return text ? el("span", { text }) : null;
  }
  const entries = Object.entries(detail);
  const shown = entries.slice(0, DETAIL_FACTS).map(([key, value]) => {
    const text = factValue(value);
    return el(
      "li",
      {},
      el("span", { class: "fact-name", text: `${key.replace(/_/g, " ")}: ` }),
      text.length > FACT_CHARS ? `${text.slice(0, FACT_CHARS - 1)}…` : text,
    );
  });
  if (entries.length > DETAIL_FACTS)
    shown.push(el("li", { class: "muted", text: `and ${entries.length - DETAIL_FACTS} more` }));
  return entries.length === 0 ? null : el("ul", { class: "detail-facts" }, shown);
}

function eventRow(event) {
  const cells = [
    el("td", { class: "num", text: event.seq ?? "" }),
    el("td", {}, el("time", { datetime: typeof event.ts === "string" ? event.ts : "", text: formatTime(event.ts) })),
    el("td", { class: "mono wrap", text: event.kind ?? "" }),
    el("td", { class: "mono wrap", text: event.principal ?? "" }),
    el("td", {}, outcomeBadge(event.outcome)),
    el("td", { class: "mono wrap", text: event.subject ?? "" }),
    el("td", { class: "wrap detail" }, detailFacts(event.detail)),
  ];
  // Each cell names its column, so a narrow screen can show a row as a card of labelled lines.
  cells.forEach((cell, i) => cell.setAttribute("data-label", COLUMNS[i]));
  return el("tr", { "data-kind": event.kind ?? "" }, cells);
}
/** Builds the Security log section. */
export function securityLogSection(api) {
  const log = { api, knownKinds: new Set(), activeKind: "", filters: { subject: "", outcome: "", since: "" } };
  Object.assign(log, securityLogLayout(log));
  return { section: log.section, refresh: () => load(log) };
}

/** The section's frame: heading with Verify and Refresh, the verify result, the filter and the events. */
function securityLogLayout(log) {
  const notices = el("div", { class: "notices" });
  const verifyResult = el("div", { class: "verify-result", "aria-live": "polite" });
  const rows = el("tbody");
  const more = el("div", { class: "toolbar" });
  const summary = el("p", { class: "muted", "aria-live": "polite" });
  const filter = filterForm(log);
  const verifyButton = el("button", { type: "button", text: "Verify chain", onClick: () => verify(log) });
  const section = el(
    "section",
    { class: "card", id: "security-log", "aria-labelledby": "security-log-title" },
    el(
      "div",
      { class: "section-head" },
      el("h2", { id: "security-log-title", text: "Security log" }),
      el(
        "div",
        { class: "toolbar" },
        verifyButton,
        el("button", { type: "button", text: "Refresh", onClick: () => load(log) }),
      ),
    ),
    verifyResult,
    filter.form,
    notices,
    summary,
    eventsTable(rows),
    more,
  );
  return { kindList: filter.kindList, notices, verifyResult, rows, more, summary, verifyButton, section };
}

/** How recent an event must be to be shown: the label and its age in hours ("" is any time). */
const SINCE_CHOICES = [
  ["", "any time"],
  ["1", "the last hour"],
  ["24", "the last 24 hours"],
  ["168", "the last 7 days"],
];
const OUTCOMES = ["", "allowed", "refused", "timeout", "error", "info"];

/** A labelled select of `choices` ([value, text] pairs). */
function choiceField(id, label, choices) {
  const select = el(
    "select",
    { id, name: id },
    choices.map(([value, text]) => el("option", { value, text })),
  );
  return { select, parts: [el("label", { for: id, text: label }), select] };
}

/** The filters: a kind (suggested from the kinds seen so far), an app, an outcome and how recent; Filter and Show all. */
function filterForm(log) {
  const kindInput = el("input", {
    id: "event-kind",
    name: "kind",
    type: "text",
    list: "event-kinds",
    autocomplete: "off",
    spellcheck: "false",
    placeholder: "all kinds",
    maxlength: "80",
  });
  const kindList = el("datalist", { id: "event-kinds" });
  const subjectInput = el("input", {
    id: "event-subject",
    name: "subject",
    type: "text",
    autocomplete: "off",
    spellcheck: "false",
    placeholder: "any app",
    maxlength: "300",
  });
  const outcome = choiceField(
    "event-outcome",
    "Outcome",
    OUTCOMES.map((o) => [o, o || "any"]),
  );
  const since = choiceField("event-since", "From", SINCE_CHOICES);
  const form = el(
    "form",
    {
      class: "inline-form log-filters",
      onSubmit: (event) => {
        event.preventDefault();
        log.activeKind = kindInput.value.trim();
        log.filters = { subject: subjectInput.value.trim(), outcome: outcome.select.value, since: since.select.value };
        load(log);
      },
    },
    el("label", { for: "event-kind", text: "Kind" }),
    kindInput,
    kindList,
    el("label", { for: "event-subject", text: "App or subject" }),
    subjectInput,
    outcome.parts,
    since.parts,
    el("button", { type: "submit", text: "Filter" }),
    el("button", {
      type: "button",
      text: "Show all",
      onClick: () => {
        kindInput.value = "";
        subjectInput.value = "";
        outcome.select.value = "";
        since.select.value = "";
        log.activeKind = "";
        log.filters = { subject: "", outcome: "", since: "" };
        load(log);
      },
    }),
  );
  return { form, kindList };
}

function eventsTable(rows) {
  // Focusable, so a keyboard can scroll it when a long value makes it wider than the page.
  return el(
    "div",
    { class: "table-wrap", tabindex: "0", role: "region", "aria-label": "Security events" },
    el(
      "table",
      { class: "events-table" },
      el("caption", { class: "visually-hidden", text: "Security events, newest first" }),
      el(
        "thead",
        {},
        el(
          "tr",
          {},
          COLUMNS.map((h) => el("th", { scope: "col", text: h })),
        ),
      ),
      rows,
    ),
  );
}

function query(log, beforeSeq) {
  const params = new URLSearchParams({ limit: String(PAGE_SIZE) });
  if (log.activeKind !== "") params.set("kind", log.activeKind);
  if (log.filters.subject !== "") params.set("subject", log.filters.subject);
  if (log.filters.outcome !== "") params.set("outcome", log.filters.outcome);
  if (log.filters.since !== "")
    params.set("since", new Date(Date.now() - Number(log.filters.since) * 3_600_000).toISOString());
  if (beforeSeq !== undefined) params.set("before_seq", String(beforeSeq));
  return `/api/security/events?${params}`;
}

function rememberKinds(log, events) {
  const { knownKinds } = log;
  let grew = false;
  for (const e of events) {
    if (typeof e.kind === "string" && !knownKinds.has(e.kind)) {
      knownKinds.add(e.kind);
      grew = true;
    }
  }
  if (grew)
    replaceChildren(
      log.kindList,
      [...knownKinds].sort().map((k) => el("option", { value: k })),
    );
}

async function load(log, beforeSeq) {
  const { rows } = log;
  const filtered = [
    log.activeKind && `of kind ${log.activeKind}`,
    log.filters.subject && `about ${log.filters.subject}`,
    log.filters.outcome && `${log.filters.outcome}`,
    log.filters.since && `from ${SINCE_CHOICES.find(([v]) => v === log.filters.since)?.[1] ?? "then"}`,
  ]
    .filter(Boolean)
    .join(", ");
  const answer = await log.api.get(query(log, beforeSeq));
  replaceChildren(log.notices);
  if (!answer.ok) {
    if (!answer.isAuthRequired) replaceChildren(log.notices, errorNotice(answer));
    return;
  }
  const events = Array.isArray(answer.data.events) ? answer.data.events : [];
  rememberKinds(log, events);
  if (beforeSeq === undefined) rows.replaceChildren();
  for (const e of events) rows.append(eventRow(e));
  const shown = rows.children.length;
  log.summary.textContent =
    shown === 0
      ? filtered
        ? `No events ${filtered}.`
        : "No events yet."
      : `${shown} ${shown === 1 ? "event" : "events"}${filtered ? ` ${filtered}` : ""}, newest first.`;
  const next = answer.data.next_before_seq;
  replaceChildren(
    log.more,
    typeof next === "number"
      ? el("button", { type: "button", text: "Load older events", onClick: () => load(log, next) })
      : null,
  );
}

async function verify(log) {
  const { verifyButton, verifyResult } = log;
  verifyButton.disabled = true;
  replaceChildren(verifyResult, el("p", { class: "muted", text: "Verifying…" }));
  const answer = await log.api.get("/api/security/events/verify");
  verifyButton.disabled = false;
  if (!answer.ok) {
    replaceChildren(verifyResult, answer.isAuthRequired ? null : errorNotice(answer));
    return;
  }
  replaceChildren(verifyResult, verifyNotice(answer.data));
}

/** What the chain check found: ok with its counts, or broken where and why. */
function verifyNotice(r) {
  const counts = `${r.checked ?? "?"} events in ${r.segments ?? "?"} ${r.segments === 1 ? "segment" : "segments"}`;
  return r.ok === true
    ? el(
        "p",
        { class: "notice notice-ok", role: "status", "data-verify": "ok" },
        el("strong", { text: "Chain ok" }),
        `: ${counts} verified, nothing edited, removed, reordered or truncated.`,
      )
    : el(
        "p",
        { class: "notice notice-error", role: "alert", "data-verify": "broken" },
        el("strong", { text: "Chain broken" }),
        typeof r.first_bad_seq === "number" ? ` at seq ${r.first_bad_seq}` : "",
        r.reason ? ": " : "",
        r.reason ? el("code", { text: r.reason }) : null,
        ` (${counts} checked).`,
      );
}
