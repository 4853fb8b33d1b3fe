// Inbox: the approvals waiting for the owner, each with who asks and exactly what would
// happen, answered once, for an hour, always, or denied; and the grants those answers left,
// each revocable. Every asker-supplied string is set as text (element.js), never as HTML.
import { el, errorNotice, infoNotice, replaceChildren } from "./element.js";
import { formatRelative, formatTime } from "./format.js";

const POLL_MS = 5000;

/** The answers an approval offers: only the scopes its asker accepts. */
const ANSWERS = [
  { scope: "once", label: "Approve once" },
  { scope: "1h", label: "Approve for an hour" },
  { scope: "30d", label: "Approve for 30 days" },
  { scope: "always", label: "Approve always" },
];

function timeText(value) {
  return el("time", { datetime: value ?? "", title: formatTime(value), text: formatRelative(value) });
}

/** Builds the Inbox section; `countBadge` is the nav's badge, kept to the pending count. */
export function inboxSection(api, countBadge) {
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
      el("button", { type: "button", text: "Refresh", onClick: () => refresh({ force: true }) }),
    ),
    notices,
    list,
    el("h3", { text: "Standing answers" }),
    grants,
  );
  let shown = "";
  let timer = null;

  function setCount(n) {
    count.textContent = String(n);
    count.className = `badge ${n > 0 ? "badge-warn" : "badge-neutral"}`;
    if (countBadge) {
      countBadge.textContent = String(n);
      countBadge.className = `badge ${n > 0 ? "badge-warn" : "badge-neutral"}`;
      countBadge.hidden = n === 0;
    }
  }

  async function answer(approval, path, body, doneText) {
    const result = await api.post(`/api/approvals/${encodeURIComponent(approval.id)}/${path}`, body);
    if (!result.ok) {
      if (!result.isAuthRequired) replaceChildren(notices, errorNotice(result));
      return;
    }
    replaceChildren(notices, infoNotice(doneText));
    await refresh({ force: true, keepNotices: true });
  }

  function card(approval) {
    const action = approval.action && typeof approval.action === "object" ? approval.action : {};
    const scopes = Array.isArray(approval.scopes) ? approval.scopes : ["once"];
    const title = typeof approval.title === "string" ? approval.title : "";
    return el(
      "article",
      { class: "approval", "data-approval-id": approval.id, "aria-label": `Approval: ${title}` },
      el("h3", { class: "approval-title", text: title }),
      el(
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
          el("dd", {}, timeText(approval.created_at), " · expires ", timeText(approval.expires_at)),
        ),
      ),
      el(
        "div",
        { class: "toolbar" },
        ANSWERS.filter((a) => scopes.includes(a.scope)).map((a) =>
          el("button", {
            type: "button",
            class: a.scope === "once" ? "button-primary" : null,
            "data-scope": a.scope,
            text: a.label,
            onClick: () => answer(approval, "approve", { scope: a.scope }, `Approved: ${title}`),
          }),
        ),
        el("button", {
          type: "button",
          class: "button-danger",
          "data-action": "deny",
          text: "Deny",
          onClick: () => answer(approval, "deny", {}, `Denied: ${title}`),
        }),
      ),
    );
  }

  function grantRow(grant) {
    return el(
      "tr",
      { "data-grant-id": grant.id },
      el("td", { class: "mono", text: grant.asked_by ?? "" }),
      el("td", { class: "mono", text: grant.kind ?? "" }),
      el("td", {
        text:
          grant.scope === "always"
            ? "always"
            : grant.scope === "1h"
              ? "for an hour"
              : grant.scope === "30d"
                ? "for 30 days"
                : String(grant.scope ?? ""),
      }),
      el("td", {}, grant.expires_at ? timeText(grant.expires_at) : "until revoked"),
      el(
        "td",
        { class: "actions" },
        el("button", {
          type: "button",
          text: "Revoke",
          "aria-label": `Revoke ${grant.kind} for ${grant.asked_by}`,
          onClick: async () => {
            const result = await api.delete(`/api/approvals/grants/${encodeURIComponent(grant.id)}`, {});
            if (!result.ok) {
              if (!result.isAuthRequired) replaceChildren(notices, errorNotice(result));
              return;
            }
            replaceChildren(notices, infoNotice(`Revoked: ${grant.asked_by} asks again for ${grant.kind}.`));
            await refresh({ force: true, keepNotices: true });
          },
        }),
      ),
    );
  }

  async function refresh(opts = {}) {
    const [pending, standing] = await Promise.all([
      api.get("/api/approvals?state=pending"),
      api.get("/api/approvals/grants"),
    ]);
    if (!pending.ok || !standing.ok) {
      const failed = pending.ok ? standing : pending;
      if (!failed.isAuthRequired) replaceChildren(list, errorNotice(failed));
      return;
    }
    if (!opts.keepNotices && opts.force) replaceChildren(notices);
    const approvals = Array.isArray(pending.data.approvals) ? pending.data.approvals : [];
    const live = Array.isArray(standing.data.grants) ? standing.data.grants : [];
    setCount(approvals.length);
    // Rebuilt only when something changed, so a poll never moves the owner's focus.
    const shownIds = JSON.stringify([approvals.map((a) => a.id), live.map((g) => g.id)]);
    if (shownIds === shown && !opts.force) return;
    shown = shownIds;
    replaceChildren(
      list,
      approvals.length === 0 ? el("p", { class: "muted", text: "Nothing is waiting for you." }) : approvals.map(card),
    );
    replaceChildren(
      grants,
      live.length === 0
        ? el("p", { class: "muted", text: "No standing answers." })
        : el(
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
              el("tbody", {}, live.map(grantRow)),
            ),
          ),
    );
  }

  function start() {
    if (timer === null) timer = setInterval(() => refresh(), POLL_MS);
  }

  return { section, refresh, start };
}
