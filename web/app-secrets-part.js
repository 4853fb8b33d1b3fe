// An app's secrets on its page: each secret its manifest asks for, why, whether a stored secret
// is assigned to it and who holds the value; "restart pending" while its running backend holds
// other secrets than a start now would give it; and one action that assigns a stored secret and
// restarts the backend, so the owner need not go to Settings and back. Never a value.
import { el, errorNotice, infoNotice, listOf, replaceChildren } from "./element.js";

/** The Secrets part of the app page of `appName`; answers {section, refresh}. `changed()` re-reads the page's summary. */
export function appSecretsPart(api, appName, changed) {
  const part = { api, appName, changed, base: `/api/apps/${encodeURIComponent(appName)}` };
  part.notices = el("div", { class: "notices", "aria-live": "polite" });
  part.body = el("div", {}, el("p", { class: "muted", text: "Loading…" }));
  part.section = el(
    "section",
    { class: "detail-part", "aria-labelledby": "app-secrets-title", id: "app-secrets" },
    el("h3", { id: "app-secrets-title", text: "Secrets" }),
    part.notices,
    part.body,
  );
  part.refresh = () => refresh(part);
  return { section: part.section, refresh: part.refresh };
}

/** Restarts the backend so it holds what is assigned now; answers whether it did. */
async function restart(part) {
  const answer = await part.api.post(`${part.base}/restart`, {});
  if (!answer.ok && !answer.isAuthRequired) replaceChildren(part.notices, errorNotice(answer));
  return answer.ok;
}

/** A secret the app holds the value of (its backend gets it at its start), not a placeholder its broker writes. */
function isHeldByApp(ask) {
  return listOf(ask.origins).length === 0;
}

async function assignAndRestart(part, ask, secretName, running) {
  const { api, appName } = part;
  const assigned = await api.post(`/api/secrets/${encodeURIComponent(secretName)}/assign`, {
    app: appName,
    as: ask.name,
  });
  if (!assigned.ok) {
    if (!assigned.isAuthRequired) replaceChildren(part.notices, errorNotice(assigned));
    return;
  }
  // A placeholder is written by the app's egress broker from the next request: no restart.
  const heldByApp = isHeldByApp(ask);
  if (heldByApp && running && !(await restart(part))) return;
  const said = `${secretName} is assigned to ${appName} as ${ask.name}`;
  replaceChildren(
    part.notices,
    infoNotice(
      !heldByApp
        ? `${said}; it applies from the next request.`
        : running
          ? `${said}, and its backend was restarted with it.`
          : `${said}; its backend gets it when it starts.`,
    ),
  );
  await part.refresh();
  await part.changed();
}

function assignForm(part, ask, stored, running) {
  const id = `app-secret-${ask.name}`;
  const choice = el(
    "select",
    { id },
    stored.map((name) => el("option", { value: name, selected: name === (ask.assigned ?? ask.name), text: name })),
  );
  const action = isHeldByApp(ask) && running ? "Assign and restart" : "Assign";
  return el(
    "form",
    {
      class: "inline-form",
      "data-secret": ask.name,
      onSubmit: async (event) => {
        event.preventDefault();
        await assignAndRestart(part, ask, choice.value, running);
      },
    },
    el("label", { for: id, text: `Stored secret for ${ask.name}` }),
    choice,
    el("button", { type: "submit", text: action, "aria-label": `${action}: ${ask.name} of ${part.appName}` }),
  );
}

function askItem(part, ask, stored, running) {
  return el(
    "li",
    { "data-secret": ask.name },
    el("p", {}, el("code", { text: ask.name }), " — ", el("span", { text: ask.why })),
    el("p", { class: "muted", text: ask.holding }),
    el("p", {
      class: "secret-state",
      text: ask.assigned ? `Assigned: ${ask.assigned}.` : "Not assigned: the app gets nothing under this name.",
    }),
    stored.length > 0
      ? assignForm(part, ask, stored, running)
      : el(
          "p",
          { class: "muted" },
          "No secret is stored yet: store one under ",
          el("a", { href: "#/settings", text: "Settings" }),
          ", then assign it here.",
        ),
  );
}

function restartPendingNotice(part) {
  return el(
    "p",
    { class: "notice notice-warn", "data-restart-pending": part.appName },
    "Restart pending: its backend started before a secret was assigned, taken back or replaced, and holds the old ones until it restarts. ",
    el("button", {
      type: "button",
      text: "Restart now",
      "aria-label": `Restart now: ${part.appName}`,
      onClick: async () => {
        if (!(await restart(part))) return;
        replaceChildren(
          part.notices,
          infoNotice(`${part.appName}'s backend was restarted with its secrets as assigned now.`),
        );
        await part.refresh();
        await part.changed();
      },
    }),
  );
}

async function refresh(part) {
  const answer = await part.api.get(`${part.base}/secrets`);
  if (!answer.ok) {
    if (!answer.isAuthRequired) replaceChildren(part.body, errorNotice(answer));
    return;
  }
  const asks = listOf(answer.data.asks);
  const stored = listOf(answer.data.stored).map(String);
  const running = answer.data.running === true;
  part.section.hidden = asks.length === 0;
  replaceChildren(
    part.body,
    answer.data.restart_pending === true ? restartPendingNotice(part) : null,
    el(
      "ul",
      { class: "secret-asks" },
      asks.map((ask) => askItem(part, ask, stored, running)),
    ),
  );
}
