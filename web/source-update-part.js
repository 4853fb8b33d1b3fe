// An app's page, for an app added from a package source: asks its source on demand whether it has
// a newer version (GET /api/sources/outdated?app=), and says "update available: X → Y" with the
// command that updates it and a button that takes the new spec to the Add page, where it is
// reviewed as the app's update and asks consent when anything changed. Asking installs nothing.
import { el, errorNotice, replaceChildren } from "./element.js";

/** The variables the installed server was given beyond the data folders every generated app has. */
function ownerVariables(review) {
  const env = review?.mcpServers?.[0]?.env ?? {};
  return Object.entries(env)
    .filter(([name]) => name !== "HOME" && !name.startsWith("XDG_"))
    .map(([name, value]) => `${name}=${value}`);
}

/** The part for `name`; `update(spec, env)` opens the Add page with the newer version's spec. */
export function sourceUpdatePart(api, name, update) {
  const result = el("div", { class: "source-update-result", "aria-live": "polite" });
  const button = el("button", { type: "button", text: "Check for a newer version", onClick: check });
  const part = el(
    "div",
    { class: "source-update", "data-part": "source-update" },
    el("div", { class: "toolbar" }, button),
    result,
  );

  async function check() {
    button.disabled = true;
    replaceChildren(result, el("p", { class: "muted", role: "status", text: "Asking its source…" }));
    const answer = await api.get(`/api/sources/outdated?app=${encodeURIComponent(name)}`);
    button.disabled = false;
    if (!answer.ok) {
      if (!answer.isAuthRequired) replaceChildren(result, errorNotice(answer));
      return;
    }
    const found = (answer.data.apps ?? [])[0];
    if (!found)
      return replaceChildren(
        result,
        el("p", { class: "muted", text: "This app was not added from a package source." }),
      );
    if (found.error) return replaceChildren(result, errorNotice(found.error));
    if (!found.outdated)
      return replaceChildren(
        result,
        el("p", {
          class: "muted",
          text:
            found.latest === null
              ? "Its source names no newer version."
              : `Up to date: ${found.installed} is the newest.`,
        }),
      );
    const consent = await api.get(`/api/apps/${encodeURIComponent(name)}/consent`);
    const env = consent.ok ? ownerVariables(consent.data.review) : [];
    replaceChildren(
      result,
      el(
        "p",
        { class: "notice notice-info", "data-update-available": found.latest },
        `Update available: ${found.installed} → ${found.latest} (${found.kind} ${found.package}). `,
        el("code", { text: `personalclaw apps update ${name} ${found.update}` }),
      ),
      el("button", {
        type: "button",
        class: "button-primary",
        text: `Review the update to ${found.latest}`,
        onClick: () => update(found.update, env),
      }),
    );
  }

  return part;
}
