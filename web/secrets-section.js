// Secrets: names, whether each is stored and which apps use it — never a value (SECR-01). A
// value is typed into a password field, sent once and the field emptied; nothing ever fills it
// back in, because no route answers a value. Apps that asked for a secret in their manifest
// are listed with why, and the owner assigns a stored secret to each.
import { el, errorNotice, infoNotice, replaceChildren } from "./element.js";

/** Builds the Secrets section. */
export function secretsSection(api) {
  const notices = el("div", { class: "notices", "aria-live": "polite" });
  const body = el("div", { class: "section-body" }, el("p", { class: "muted", text: "Loading secrets…" }));
  const nameInput = el("input", {
    type: "text",
    id: "secret-name",
    autocomplete: "off",
    spellcheck: "false",
    placeholder: "WEATHER_API_KEY",
  });
  const valueInput = el("input", {
    type: "password",
    id: "secret-value",
    autocomplete: "new-password",
    spellcheck: "false",
  });
  const section = el(
    "section",
    { class: "card", id: "secrets", "aria-labelledby": "secrets-title" },
    el(
      "div",
      { class: "section-head" },
      el("h2", { id: "secrets-title", text: "Secrets" }),
      el("button", { type: "button", text: "Refresh", onClick: () => refresh() }),
    ),
    el("p", {
      class: "muted",
      text: "Values are sealed on this computer and never shown again. An app gets a secret you assign to it as an environment variable when its backend starts.",
    }),
    notices,
    el(
      "form",
      {
        class: "inline-form",
        id: "secret-form",
        onSubmit: (event) => {
          event.preventDefault();
          store(nameInput.value.trim(), valueInput);
        },
      },
      el("label", { for: "secret-name", text: "Name" }),
      nameInput,
      el("label", { for: "secret-value", text: "Value" }),
      valueInput,
      el("button", { type: "submit", text: "Store" }),
    ),
    body,
  );

  async function store(name, input) {
    const value = input.value;
    // The field is emptied before the answer arrives, whatever it says.
    input.value = "";
    if (name === "" || value === "") return replaceChildren(notices, infoNotice("Give the secret a name and a value."));
    const answer = await api.put(`/api/secrets/${encodeURIComponent(name)}`, { value });
    if (!answer.ok) {
      if (!answer.isAuthRequired) replaceChildren(notices, errorNotice(answer));
      return;
    }
    replaceChildren(notices, infoNotice(`${answer.data.replaced ? "Replaced" : "Stored"} ${name}.`));
    await refresh();
  }

  async function act(method, path, payload, doneText) {
    const answer = await api[method](path, payload);
    if (!answer.ok) {
      if (!answer.isAuthRequired) replaceChildren(notices, errorNotice(answer));
      return;
    }
    replaceChildren(notices, infoNotice(doneText));
    await refresh();
  }

  function secretRow(secret) {
    const replaceInput = el("input", {
      type: "password",
      autocomplete: "new-password",
      "aria-label": `New value for ${secret.name}`,
    });
    const users = secret.used_by.map((u) => (u.as === secret.name ? u.app : `${u.app} (as ${u.as})`)).join(", ");
    return el(
      "tr",
      { "data-secret": secret.name },
      el("th", { scope: "row" }, el("code", { text: secret.name })),
      el("td", { text: secret.stored ? "stored" : "not stored" }),
      el("td", { "data-used-by": "", text: users || "no app" }),
      el(
        "td",
        {},
        el(
          "span",
          { class: "inline-form" },
          replaceInput,
          el("button", { type: "button", text: "Replace", onClick: () => store(secret.name, replaceInput) }),
        ),
        el("button", {
          type: "button",
          class: "button-danger",
          text: "Delete",
          onClick: () =>
            act("delete", `/api/secrets/${encodeURIComponent(secret.name)}`, {}, `Deleted ${secret.name}.`),
        }),
      ),
    );
  }

  function declaredRow(declared, stored) {
    const choice = el(
      "select",
      { "aria-label": `Secret for ${declared.app} ${declared.name}` },
      stored.map((name) =>
        el("option", { value: name, selected: name === (declared.assigned ?? declared.name), text: name }),
      ),
    );
    return el(
      "tr",
      { "data-declared": `${declared.app}:${declared.name}` },
      el("th", { scope: "row", text: declared.app }),
      el("td", {}, el("code", { text: declared.name }), " ", el("span", { class: "muted", text: declared.why })),
      el("td", { text: declared.assigned ? `has ${declared.assigned}` : "not assigned" }),
      el(
        "td",
        {},
        stored.length === 0
          ? el("span", { class: "muted", text: "Store a secret first." })
          : el(
              "span",
              { class: "inline-form" },
              choice,
              el("button", {
                type: "button",
                text: "Assign",
                onClick: () =>
                  act(
                    "post",
                    `/api/secrets/${encodeURIComponent(choice.value)}/assign`,
                    { app: declared.app, as: declared.name },
                    `${declared.app} gets ${choice.value} as ${declared.name} at its next start.`,
                  ),
              }),
            ),
        declared.assigned
          ? el("button", {
              type: "button",
              text: "Take back",
              onClick: () =>
                act(
                  "post",
                  `/api/secrets/${encodeURIComponent(declared.assigned)}/unassign`,
                  { app: declared.app, as: declared.name },
                  `Took ${declared.name} back from ${declared.app}.`,
                ),
            })
          : null,
      ),
    );
  }

  async function refresh() {
    const answer = await api.get("/api/secrets");
    if (!answer.ok) {
      if (!answer.isAuthRequired) replaceChildren(body, errorNotice(answer));
      return;
    }
    const { secrets, declared } = answer.data;
    const stored = secrets.filter((s) => s.stored).map((s) => s.name);
    replaceChildren(
      body,
      secrets.length === 0
        ? el("p", { class: "muted", text: "No secrets are stored." })
        : el(
            "table",
            { class: "secrets-table" },
            el(
              "thead",
              {},
              el(
                "tr",
                {},
                el("th", { text: "Name" }),
                el("th", { text: "State" }),
                el("th", { text: "Used by" }),
                el("th", { text: "Change" }),
              ),
            ),
            el("tbody", {}, secrets.map(secretRow)),
          ),
      el("h3", { text: "Apps asking for secrets" }),
      declared.length === 0
        ? el("p", { class: "muted", text: "No installed app asks for a secret." })
        : el(
            "table",
            { class: "declared-table" },
            el(
              "thead",
              {},
              el(
                "tr",
                {},
                el("th", { text: "App" }),
                el("th", { text: "Asks for" }),
                el("th", { text: "Now" }),
                el("th", { text: "Assign" }),
              ),
            ),
            el(
              "tbody",
              {},
              declared.map((d) => declaredRow(d, stored)),
            ),
          ),
    );
  }

  return { section, refresh };
}
