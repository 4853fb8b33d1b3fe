// Inbox: the approvals waiting for the owner, each with who asks and exactly what would
// happen, answered once, for an hour, always, or denied; and the grants those answers left,
// each revocable. Every asker-supplied string is set as text (element.js), never as HTML.
import { el, errorNotice, infoNotice, replaceChildren, timeElement } from "./element.js";

const POLL_MS = 5000;

/** The answers an approval offers: only the scopes its asker accepts. */
const ANSWERS = [
  { scope: "once", label: "Approve once" },
  { scope: "1h", label: "Approve for an hour" },
  { scope: "30d", label: "Approve for 30 days" },
  { scope: "always", label: "Approve always" },
];

/** Builds the Inbox section; `countBadge` is the nav's badge, kept to the pending count. */
export function inboxSection(api, countBadge) {
  const inbox = { api, countBadge, shown: "", timer: /** @type {ReturnType<typeof setInterval> | null} */ (null) };
  Object.assign(
    inbox,
    inboxLayout(() => refresh(inbox, { force: true })),
  );
  function start() {
    if (inbox.timer === null) inbox.timer = setInterval(() => refresh(inbox), POLL_MS);
  }
  return { section: inbox.section, refresh: (opts) => refresh(inbox, opts), start };
}

/** The section's frame: heading with its count and Refresh, notices, the approvals and the grants. */
function inboxLayout(onRefresh) {
  const notices = el("div", { class: "notices", "aria-live": "polite" });
  const count = el("span", {
    class: "badge badge-neutral",
    id: "inbox-count",
    "aria-label": "approvals waiting",
    text: "0",
  });
  const list = el("div", { class: "section-body" }, el("p", { class: "muted", text: "Loading the Inbox…" }));
  const grants = el("div", { class: "section-body", id: "inbox-grants" });
  const section = el(
    "section",
    { class: "card", id: "inbox", "aria-labelledby": "inbox-title" },
    el(
      "div",
      { class: "section-head" },
      el("h2", { id: "inbox-title" }, "Inbox", count),
      el("button", { type: "button", text: "Refresh", onClick: () => onRefresh() }),
    ),
    notices,
    list,
    el("h3", { text: "Standing answers" }),
    grants,
  );
  return { notices, count, list, grants, section };
}

function setCount(inbox, n) {
  const { count, countBadge } = inbox;
  count.textContent = String(n);
  count.className = `badge ${n > 0 ? "badge-warn" : "badge-neutral"}`;
  if (countBadge) {
    countBadge.textContent = String(n);
    countBadge.className = `badge ${n > 0 ? "badge-warn" : "badge-neutral"}`;
    countBadge.hidden = n === 0;
  }
}

async function answer(inbox, approval, path, body, doneText) {
  const result = await inbox.api.post(`/api/approvals/${encodeURIComponent(approval.id)}/${path}`, body);
  if (!result.ok) {
    if (!result.isAuthRequired) replaceChildren(inbox.notices, errorNotice(result));
    return;
  }
  replaceChildren(inbox.notices, infoNotice(doneText));
  await refresh(inbox, { force: true, keepNotices: true });
}

function card(inbox, approval) {
  const action = approval.action && typeof approval.action === "object" ? approval.action : {};
  const scopes = Array.isArray(approval.scopes) ? approval.scopes : ["once"];
  const title = typeof approval.title === "string" ? approval.title : "";
  return el(
    "article",
    { class: "approval", "data-approval-id": approval.id, "aria-label": `Approval: ${title}` },
    el("h3", { class: "approval-title", text: title }),
    approvalTerms(approval, action),
    el(
      "div",
      { class: "toolbar" },
      ANSWERS.filter((a) => scopes.includes(a.scope)).map((a) =>
        el("button", {
          type: "button",
          class: a.scope === "once" ? "button-primary" : null,
          "data-scope": a.scope,
          text: a.label,
          onClick: () => answer(inbox, approval, "approve", { scope: a.scope }, `Approved: ${title}`),
        }),
      ),
      el("button", {
        type: "button",
        class: "button-danger",
        "data-action": "deny",
        text: "Deny",
        onClick: () => answer(inbox, approval, "deny", {}, `Denied: ${title}`),
      }),
    ),
  );
}

/** Who asks, what kind of action, exactly what would happen, whether it widens reach, and when. */
function approvalTerms(approval, action) {
  return el(
    "dl",
    { class: "terms" },
    el(
      "div",
      {},
      el("dt", { text: "Who asks" }),
      el("dd", { class: "mono", "data-field": "asked-by", text: approval.asked_by ?? "" }),
    ),
    el("div", {}, el("dt", { text: "Kind of action" }), el("dd", { class: "mono", text: approval.kind ?? "" })),
    el(
      "div",
      {},
      el("dt", { text: "What would happen" }),
      el(
        "dd",
        { "data-field": "action" },
        el("code", { text: `${action.route ?? ""} ${action.target ?? ""}`.trim() }),
        action.summary ? el("div", { text: action.summary }) : null,
      ),
    ),
    action.change
      ? el(
          "div",
          { "data-field": "change" },
          el("dt", { text: "What changed" }),
          el(
            "dd",
            {},
            el("p", { class: "muted", text: "Before (what you consented to):" }),
            el("pre", { class: "wrap", "data-side": "before", text: String(action.change.before ?? "") }),
            el("p", { class: "muted", text: "After (what it offers now):" }),
            el("pre", { class: "wrap", "data-side": "after", text: String(action.change.after ?? "") }),
          ),
        )
      : null,
    el(
      "div",
      {},
      el("dt", { text: "Arguments digest" }),
      el("dd", { class: "mono wrap", text: action.arguments_digest ?? "" }),
    ),
    action.widens_reach === true
      ? el(
          "div",
          {},
          el("dt", { text: "Reach" }),
          el("dd", {}, el("span", { class: "badge badge-warn", text: "widens what the app can reach" })),
        )
      : null,
    el(
      "div",
      {},
      el("dt", { text: "Asked" }),
      el("dd", {}, timeElement(approval.created_at), " · expires ", timeElement(approval.expires_at)),
    ),
  );
}

function scopeText(scope) {
  if (scope === "always") return "always";
  if (scope === "1h") return "for an hour";
  if (scope === "30d") return "for 30 days";
  return String(scope ?? "");
}

function grantRow(inbox, grant) {
  return el(
    "tr",
    { "data-grant-id": grant.id },
    el("td", { class: "mono", text: grant.asked_by ?? "" }),
    el("td", { class: "mono", text: grant.kind ?? "" }),
    el("td", { text: scopeText(grant.scope) }),
    el("td", {}, grant.expires_at ? timeElement(grant.expires_at) : "until revoked"),
    el(
      "td",
      { class: "actions" },
      el("button", {
        type: "button",
        text: "Revoke",
        "aria-label": `Revoke ${grant.kind} for ${grant.asked_by}`,
        onClick: async () => {
          const result = await inbox.api.delete(`/api/approvals/grants/${encodeURIComponent(grant.id)}`, {});
          if (!result.ok) {
            if (!result.isAuthRequired) replaceChildren(inbox.notices, errorNotice(result));
            return;
          }
          replaceChildren(inbox.notices, infoNotice(`Revoked: ${grant.asked_by} asks again for ${grant.kind}.`));
          await refresh(inbox, { force: true, keepNotices: true });
        },
      }),
    ),
  );
}

function grantsTable(inbox, live) {
  if (live.length === 0) return el("p", { class: "muted", text: "No standing answers." });
  return el(
    "div",
    { class: "table-wrap" },
    el(
      "table",
      { class: "grants-table" },
      el("caption", { class: "visually-hidden", text: "Standing answers to approvals" }),
      el(
        "thead",
        {},
        el(
          "tr",
          {},
          ["Who asks", "Kind of action", "Scope", "Ends", ""].map((h) => el("th", { scope: "col", text: h })),
        ),
      ),
      el(
        "tbody",
        {},
        live.map((grant) => grantRow(inbox, grant)),
      ),
    ),
  );
}

async function refresh(inbox, opts = {}) {
  const [pending, standing] = await Promise.all([
    inbox.api.get("/api/approvals?state=pending"),
    inbox.api.get("/api/approvals/grants"),
  ]);
  if (!pending.ok || !standing.ok) {
    const failed = pending.ok ? standing : pending;
    if (!failed.isAuthRequired) replaceChildren(inbox.list, errorNotice(failed));
    return;
  }
  if (!opts.keepNotices && opts.force) replaceChildren(inbox.notices);
  const approvals = Array.isArray(pending.data.approvals) ? pending.data.approvals : [];
  const live = Array.isArray(standing.data.grants) ? standing.data.grants : [];
  setCount(inbox, approvals.length);
  // Rebuilt only when something changed, so a poll never moves the owner's focus.
  const shownIds = JSON.stringify([approvals.map((a) => a.id), live.map((g) => g.id)]);
  if (shownIds === inbox.shown && !opts.force) return;
  inbox.shown = shownIds;
  replaceChildren(
    inbox.list,
    approvals.length === 0
      ? el("p", { class: "muted", text: "Nothing is waiting for you." })
      : approvals.map((approval) => card(inbox, approval)),
  );
  replaceChildren(inbox.grants, grantsTable(inbox, live));
}
