// Update for one app: a folder path, then a preview against the installed copy's consented
// review. Preview never updates: it always shows what changes (version, files, each grant, host
// and package, in words) and the new review folded below, and only Update now consents to that
// digest, whether or not anything the owner consented to changes.
import { el, errorNotice, replaceChildren } from "./element.js";
import { installReview } from "./install-review.js";
import { changeList } from "./update-changes.js";
import { installProgressView, newInstallId, UPDATE_STEPS, withInstallProgress } from "./install-progress.js";

/**
 * What the owner is told while an update runs, from the app view (`installed`: enabled,
 * hasBackend, updateKeepsServing; the rule is the gateway's: enabled, a backend and no storage):
 * whether the current version keeps answering.
 * @param {any} installed
 */
export function updatingText(installed) {
  if (installed?.enabled === false)
    return "Updating… this app is disabled, so nothing of it runs meanwhile: the new version is installed and stays disabled until you enable it.";
  if (installed?.hasBackend === false)
    return "Updating… this app has no backend: the new version's files replace the current ones.";
  return installed?.updateKeepsServing === true
    ? "Updating… the current version keeps answering until the new one passes its health check (30 s unless the app sets its own start timeout); if it does not, the current version simply stays."
    : "Updating… this app keeps data, so its backend stops while its data is copied and is down until the new version passes its health check (30 s unless the app sets its own start timeout); if it does not, the previous version comes back with its data.";
}

/**
 * Runs the update, showing what the owner is told meanwhile and each step the bridge reports;
 * answers the update's answer and the progress view (kept below an error).
 */
async function updateWithProgress(api, host, name, source, consent, installed) {
  const installId = newInstallId();
  const progress = installProgressView(source, UPDATE_STEPS);
  replaceChildren(host, el("p", { class: "muted", role: "status", text: updatingText(installed) }), progress.node);
  const { answer, steps } = await withInstallProgress(api, installId, progress.update, () =>
    api.post(`/api/apps/${encodeURIComponent(name)}/update`, {
      source,
      ...(consent ? { consent } : {}),
      install_id: installId,
    }),
  );
  progress.finish(answer, steps);
  return { answer, progress };
}

/**
 * The Update control for `name`; `updated(message)` shows the outcome in the section's notices
 * and refreshes the list (which rebuilds this control, so the message cannot live here);
 * `installed` (the app as listed: version, consentDigest) lets the review say what changes, and
 * its updateKeepsServing what the owner is told while the update runs.
 * @param {any} api
 * @param {string} name
 * @param {(message: string) => Promise<void>} updated
 * @param {any} [installed]
 */
export function updateControl(api, name, updated, installed = null) {
  const wrap = el("span", { class: "update", "data-update": name });
  const host = el("div", { class: "update-review" });

  function showButton() {
    replaceChildren(
      wrap,
      el("button", { type: "button", text: "Update", "aria-label": `Update ${name}`, onClick: ask }),
    );
  }

  async function run(source, consent) {
    const { answer, progress } = await updateWithProgress(api, host, name, source, consent, installed);
    if (answer.isAuthRequired) return;
    if (answer.ok) {
      replaceChildren(host);
      showButton();
      await updated(`Updated ${name} to ${answer.data.app?.version ?? "the new version"}.`);
      return;
    }
    if (answer.code === "consent_required" && answer.detail?.review) return showReview(source, answer.detail);
    // The steps stay below the error: which one failed, and whether the old version kept answering.
    replaceChildren(host, errorNotice(answer), progress.node);
  }

  function showReview(source, preview) {
    const consentNeeded = preview.consentNeeded !== false;
    replaceChildren(
      host,
      el(
        "section",
        { class: "update-preview", "aria-label": `Update of ${name}` },
        el("p", {
          class: `notice ${consentNeeded ? "notice-warn" : "notice-info"}`,
          tabindex: "-1",
          text: consentNeeded
            ? "This update changes what the app gets or does not scan clean. Read what changes; Update now consents to it."
            : "This update changes nothing you consented to. Read what changes; nothing happens until Update now.",
        }),
        changeList(preview, installed),
        el(
          "details",
          { class: "update-full-review" },
          el("summary", { text: "The whole review of the new version" }),
          installReview(preview.review, preview.digest),
        ),
        el(
          "div",
          { class: "toolbar" },
          el("button", {
            type: "button",
            class: "button-primary",
            text: "Update now",
            "aria-label": `Update now: ${name}`,
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
      ),
    );
    // Focus lands on what changes, not on the button that consents to it.
    host.querySelector(".notice")?.focus();
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
          showReview(source, preview.data);
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
