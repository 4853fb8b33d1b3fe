// Security log: the latest events with a kind filter and paging, and chain verification.
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

function eventRow(event) {
  const detail = compactJson(event.detail);
  return el(
    "tr",
    { "data-kind": event.kind ?? "" },
    el("td", { class: "num", text: event.seq ?? "" }),
    el("td", {}, el("time", { datetime: typeof event.ts === "string" ? event.ts : "", text: formatTime(event.ts) })),
    el("td", { class: "mono", text: event.kind ?? "" }),
    el("td", { class: "mono", text: event.principal ?? "" }),
    el("td", {}, outcomeBadge(event.outcome)),
    el("td", { class: "mono wrap", text: event.subject ?? "" }),
    el("td", {
      class: "mono wrap detail",
      title: detail,
      text: detail.length > 240 ? `${detail.slice(0, 240)}…` : detail,
    }),
  );
}
/** Builds the Security log section. */
export function securityLogSection(api) {
  const log = { api, knownKinds: new Set(), activeKind: "" };
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

/** The kind filter: a kind (suggested from the kinds seen so far), Filter and Show all. */
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
  const form = el(
    "form",
    {
      class: "inline-form",
      onSubmit: (event) => {
        event.preventDefault();
        log.activeKind = kindInput.value.trim();
        load(log);
      },
    },
    el("label", { for: "event-kind", text: "Kind" }),
    kindInput,
    kindList,
    el("button", { type: "submit", text: "Filter" }),
    el("button", {
      type: "button",
      text: "Show all",
      onClick: () => {
        kindInput.value = "";
        log.activeKind = "";
        load(log);
      },
    }),
  );
  return { form, kindList };
}

function eventsTable(rows) {
  return el(
    "div",
    { class: "table-wrap" },
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
          ["Seq", "Time", "Kind", "Principal", "Outcome", "Subject", "Detail"].map((h) =>
            el("th", { scope: "col", text: h }),
          ),
        ),
      ),
      rows,
    ),
  );
}

function query(log, beforeSeq) {
  const params = new URLSearchParams({ limit: String(PAGE_SIZE) });
  if (log.activeKind !== "") params.set("kind", log.activeKind);
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
  const { rows, activeKind } = log;
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
      ? activeKind
        ? `No events of kind ${activeKind}.`
        : "No events yet."
      : `${shown} ${shown === 1 ? "event" : "events"}${activeKind ? ` of kind ${activeKind}` : ""}, newest first.`;
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
