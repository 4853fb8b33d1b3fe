// Update for one app: a folder path, then a preview against the installed copy's consented
// review. An update that changes nothing the owner consented to runs at once; otherwise the
// new review and each change are shown, and only a second press consents to that digest.
import { el, errorNotice, replaceChildren } from "./element.js";
import { installReview } from "./install-review.js";

/** What an update changes against the consented review, one line per field; null when nothing. */
export function changeList(changes) {
  const items = Array.isArray(changes) ? changes : [];
  if (items.length === 0) return null;
  const text = (value) => String(JSON.stringify(value) ?? "null").slice(0, 300);
  return el(
    "ul",
    { class: "update-changes" },
    items.map((c) => el("li", {}, el("strong", { text: String(c.field) }), `: ${text(c.before)} → ${text(c.after)}`)),
  );
}

/**
 * The Update control for `name`; `updated(message)` shows the outcome in the section's notices
 * and refreshes the list (which rebuilds this control, so the message cannot live here).
 */
export function updateControl(api, name, updated) {
  const wrap = el("span", { class: "update", "data-update": name });
  const host = el("div", { class: "update-review" });

  function showButton() {
    replaceChildren(
      wrap,
      el("button", { type: "button", text: "Update", "aria-label": `Update ${name}`, onClick: ask }),
    );
  }

  async function run(source, consent) {
    replaceChildren(
      host,
      el("p", {
        class: "muted",
        role: "status",
        text: "Updating… its backend is down while the new version starts (up to 30 s); if it does not become healthy, the previous version comes back with its data.",
      }),
    );
    const answer = await api.post(
      `/api/apps/${encodeURIComponent(name)}/update`,
      consent ? { source, consent } : { source },
    );
    if (answer.ok) {
      replaceChildren(host);
      showButton();
      await updated(`Updated ${name} to ${answer.data.app?.version ?? "the new version"}.`);
      return;
    }
    if (answer.code === "consent_required" && answer.detail?.review) return showReview(source, answer.detail);
    replaceChildren(host, errorNotice(answer));
  }

  function showReview(source, preview) {
    replaceChildren(
      host,
      el("p", {
        class: "notice notice-warn",
        text: "This update changes what the app gets or does not scan clean. Read what changes; Update now consents to it.",
      }),
      changeList(preview.changes),
      installReview(preview.review, preview.digest),
      el(
        "div",
        { class: "toolbar" },
        el("button", {
          type: "button",
          class: "button-primary",
          text: "Update now",
          "aria-label": `Update ${name} now`,
          onClick: () => run(source, preview.digest),
        }),
        el("button", {
          type: "button",
          text: "Cancel",
          onClick: () => {
            replaceChildren(host);
            showButton();
          },
        }),
      ),
    );
  }

  function ask() {
    const input = el("input", {
      type: "text",
      name: "source",
      required: true,
      autocomplete: "off",
      spellcheck: "false",
      placeholder: "/home/me/my-app",
      "aria-label": `Folder of the new version of ${name}`,
    });
    const form = el(
      "form",
      {
        class: "inline-form",
        onSubmit: async (event) => {
          event.preventDefault();
          const source = input.value.trim();
          const preview = await api.post("/api/apps/preview", { source, name });
          if (!preview.ok) return replaceChildren(host, errorNotice(preview));
          if (preview.data.consentNeeded) return showReview(source, preview.data);
          await run(source, undefined);
        },
      },
      input,
      el("button", { type: "submit", text: "Preview update" }),
      el("button", {
        type: "button",
        text: "Cancel",
        onClick: () => {
          replaceChildren(host);
          showButton();
        },
      }),
    );
    replaceChildren(wrap, form);
    input.focus();
  }

  showButton();
  return el("span", { "data-control": `update:${name}` }, wrap, host);
}
