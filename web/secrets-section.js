// Secrets: names, whether each is stored and which apps use it — never a value (SECR-01). A
// value is typed into a password field, sent once and the field emptied; nothing ever fills it
// back in, because no route answers a value. Apps that asked for a secret in their manifest
// are listed with why, and the owner assigns a stored secret to each — and, for a secret the
// app never holds, chooses the origins its value is written to (empty: the declared ones).
import { el, errorNotice, infoNotice, replaceChildren } from "./element.js";

/** Builds the Secrets section. */
export function secretsSection(api) {
  const secrets = { api };
  Object.assign(
    secrets,
    secretsLayout(
      () => refresh(secrets),
      (name, input) => store(secrets, name, input),
    ),
  );
  return { section: secrets.section, refresh: () => refresh(secrets) };
}

/** The section's frame: heading with Refresh, what a value becomes, notices, the Store form and the body. */
function secretsLayout(onRefresh, onStore) {
  const notices = el("div", { class: "notices", "aria-live": "polite" });
  const body = el("div", { class: "section-body" }, el("p", { class: "muted", text: "Loading secrets…" }));
  const section = el(
    "section",
    { class: "card", id: "secrets", "aria-labelledby": "secrets-title" },
    el(
      "div",
      { class: "section-head" },
      el("h2", { id: "secrets-title", text: "Secrets" }),
      el("button", { type: "button", text: "Refresh", onClick: () => onRefresh() }),
    ),
    el("p", {
      class: "muted",
      text: "Values are sealed on this computer and never shown again. An app gets a secret you assign to it as an environment variable when its backend starts.",
    }),
    notices,
    storeForm(onStore),
    body,
  );
  return { notices, body, section };
}

/** The Store form: a name and a password field; `onStore(name, valueInput)` sends it. */
function storeForm(onStore) {
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
  return el(
    "form",
    {
      class: "inline-form",
      id: "secret-form",
      onSubmit: (event) => {
        event.preventDefault();
        onStore(nameInput.value.trim(), valueInput);
      },
    },
    el("label", { for: "secret-name", text: "Name" }),
    nameInput,
    el("label", { for: "secret-value", text: "Value" }),
    valueInput,
    el("button", { type: "submit", text: "Store" }),
  );
}

async function store(secrets, name, input) {
  const { notices } = secrets;
  const value = input.value;
  // The field is emptied before the answer arrives, whatever it says.
  input.value = "";
  if (name === "" || value === "") return replaceChildren(notices, infoNotice("Give the secret a name and a value."));
  const answer = await secrets.api.put(`/api/secrets/${encodeURIComponent(name)}`, { value });
  if (!answer.ok) {
    if (!answer.isAuthRequired) replaceChildren(notices, errorNotice(answer));
    return;
  }
  replaceChildren(notices, infoNotice(`${answer.data.replaced ? "Replaced" : "Stored"} ${name}.`));
  await refresh(secrets);
}

async function act(secrets, method, path, payload, doneText) {
  const answer = await secrets.api[method](path, payload);
  if (!answer.ok) {
    if (!answer.isAuthRequired) replaceChildren(secrets.notices, errorNotice(answer));
    return;
  }
  replaceChildren(secrets.notices, infoNotice(doneText));
  await refresh(secrets);
}

function secretRow(secrets, secret) {
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
        el("button", { type: "button", text: "Replace", onClick: () => store(secrets, secret.name, replaceInput) }),
      ),
      el("button", {
        type: "button",
        class: "button-danger",
        text: "Delete",
        onClick: () =>
          act(secrets, "delete", `/api/secrets/${encodeURIComponent(secret.name)}`, {}, `Deleted ${secret.name}.`),
      }),
    ),
  );
}

/** The origins typed in `input`, split on spaces and commas; none means the app's declared ones. */
function typedOrigins(input) {
  return input.value.split(/[\s,]+/).filter((o) => o !== "");
}

/** For a secret the app never holds: where its value goes now, and a field to choose other origins. */
function originsPart(declared) {
  if (declared.origins.length === 0) return { part: null, input: null };
  const input = el("input", {
    type: "text",
    spellcheck: "false",
    autocomplete: "off",
    value: declared.origins_from === "owner" ? declared.origins.join(" ") : "",
    placeholder: declared.origins.join(" "),
    "aria-label": `Origins for ${declared.app} ${declared.name} (empty: the declared ones)`,
  });
  const now =
    declared.origins_from === "owner"
      ? `Sent to the origins you chose: ${declared.origins.join(", ")}`
      : `Sent to the declared origins: ${declared.origins.join(", ")}`;
  return { part: el("p", { class: "secret-origins" }, el("span", { class: "muted", text: now }), " ", input), input };
}

function declaredRow(secrets, declared, stored) {
  const origins = originsPart(declared);
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
    el(
      "td",
      {},
      el("code", { text: declared.name }),
      " ",
      el("span", { class: "muted", text: declared.why }),
      declared.holding ? el("p", { class: "secret-holding", text: String(declared.holding) }) : null,
      origins.part,
    ),
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
              onClick: () => assign(secrets, declared, choice.value, origins.input ? typedOrigins(origins.input) : []),
            }),
          ),
      declared.assigned
        ? el("button", {
            type: "button",
            text: "Take back",
            onClick: () =>
              act(
                secrets,
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

async function assign(secrets, declared, name, origins) {
  const body = { app: declared.app, as: declared.name, ...(origins.length ? { origins } : {}) };
  const answer = await secrets.api.post(`/api/secrets/${encodeURIComponent(name)}/assign`, body);
  if (!answer.ok) {
    if (!answer.isAuthRequired) replaceChildren(secrets.notices, errorNotice(answer));
    return;
  }
  const to = answer.data.origins.length ? ` It is sent only to ${answer.data.origins.join(", ")}.` : "";
  replaceChildren(
    secrets.notices,
    infoNotice(`${declared.app} gets ${name} as ${declared.name} ${answer.data.applies}.${to}`),
  );
  await refresh(secrets);
}

function secretsTable(secrets, rows) {
  if (rows.length === 0) return el("p", { class: "muted", text: "No secrets are stored." });
  return el(
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
    el(
      "tbody",
      {},
      rows.map((secret) => secretRow(secrets, secret)),
    ),
  );
}

function declaredTable(secrets, declared, stored) {
  if (declared.length === 0) return el("p", { class: "muted", text: "No installed app asks for a secret." });
  return el(
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
      declared.map((d) => declaredRow(secrets, d, stored)),
    ),
  );
}

async function refresh(secrets) {
  const answer = await secrets.api.get("/api/secrets");
  if (!answer.ok) {
    if (!answer.isAuthRequired) replaceChildren(secrets.body, errorNotice(answer));
    return;
  }
  const { secrets: rows, declared } = answer.data;
  const stored = rows.filter((s) => s.stored).map((s) => s.name);
  replaceChildren(
    secrets.body,
    secretsTable(secrets, rows),
    el("h3", { text: "Apps asking for secrets" }),
    declaredTable(secrets, declared, stored),
  );
}
