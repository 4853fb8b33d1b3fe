// Uninstall for one app: a first press only asks, with "Also delete its data" unticked and focus
// on Cancel, so an app's data is deleted only by a second, deliberate press with the box ticked,
// and a stray Enter or Space after the first press cancels rather than uninstalls. The question
// says what else goes: the secrets assigned to it are taken back, the stored secrets stay.
import { el, replaceChildren } from "./element.js";

/**
 * The Uninstall control for `name`. `uninstall(purgeData)` does the work; while it runs the
 * control is disabled; it answers true once the app is gone, else the control comes back.
 */
export function uninstallControl(name, uninstall) {
  const wrap = el("span", { class: "confirming uninstall", "data-uninstall": name });

  function showButton() {
    wrap.classList.remove("is-asking");
    replaceChildren(
      wrap,
      el("button", {
        type: "button",
        class: "button-danger",
        text: "Uninstall",
        "aria-label": `Uninstall ${name}`,
        onClick: ask,
      }),
    );
  }

  function ask() {
    const checkboxId = `purge-data-${name}`;
    const purge = el("input", { type: "checkbox", id: checkboxId, name: "purge_data" });
    const confirm = el("button", {
      type: "button",
      class: "button-danger",
      text: "Yes, uninstall",
      "aria-label": `Yes, uninstall ${name}`,
      onClick: async () => {
        for (const control of wrap.querySelectorAll("button, input")) control.disabled = true;
        const isDone = await uninstall(purge.checked);
        if (!isDone) for (const control of wrap.querySelectorAll("button, input")) control.disabled = false;
      },
    });
    const cancel = el("button", {
      type: "button",
      text: "Cancel",
      "aria-label": `Cancel uninstalling ${name}`,
      onClick: () => {
        showButton();
        wrap.querySelector("button")?.focus();
      },
    });
    wrap.classList.add("is-asking");
    replaceChildren(
      wrap,
      el("span", { class: "confirm-question", text: `Uninstall ${name}?` }),
      el("span", {
        class: "muted confirm-note",
        text: "Its data is kept unless you tick the box; secrets assigned to it are taken back, and the stored secrets stay in Settings.",
      }),
      el("label", { class: "purge-choice", for: checkboxId }, purge, " Also delete its data"),
      confirm,
      cancel,
    );
    cancel.focus();
  }

  showButton();
  return wrap;
}
