// Settings: every editable path of config.json with its meaning and value, from the one schema
// GET /api/config/personalclaw answers. A change that loosens security comes back as the
// gateway's question (a 200 marked Consent-Asked): it is shown as a consent dialog, and only
// "Allow" sends the same write again with "confirm": true. Lists of names are edited one name
// at a time. Every value is set as text, never parsed as HTML.
import { el, errorNotice, infoNotice, replaceChildren } from "./element.js";

function valueAt(config, path) {
  return path.split(".").reduce((node, key) => (node === undefined || node === null ? undefined : node[key]), config);
}

function describeValue(spec, value) {
  if (Array.isArray(value)) return value.length === 0 ? "none" : value.join(", ");
  if (spec.unit === "seconds" && value >= 86400 && value % 86400 === 0) return counted(value / 86400, "days");
  return spec.unit && spec.unit !== "processes" ? counted(value, spec.unit) : String(value);
}

/** "1 second", "2 seconds": a plural unit reads singular for exactly one. */
function counted(value, unit) {
  return `${value} ${value === 1 && /[a-z]s$/.test(unit) ? unit.slice(0, -1) : unit}`;
}

/** Builds the Settings section. */
export function settingsSection(api) {
  const settings = { api };
  Object.assign(
    settings,
    settingsLayout(() => refresh(settings)),
  );
  return { section: settings.section, refresh: () => refresh(settings) };
}

/** The section's frame: heading with Refresh, where changes go, notices, the consent dialog's place, the body. */
function settingsLayout(onRefresh) {
  const notices = el("div", { class: "notices", "aria-live": "polite" });
  const dialogHost = el("div", { class: "consent-host" });
  const body = el("div", { class: "section-body" }, el("p", { class: "muted", text: "Loading settings…" }));
  const section = el(
    "section",
    { class: "card", id: "settings", "aria-labelledby": "settings-title" },
    el(
      "div",
      { class: "section-head" },
      el("h2", { id: "settings-title", text: "Settings" }),
      el("button", { type: "button", text: "Refresh", onClick: () => onRefresh() }),
    ),
    el("p", { class: "muted", text: "Changes are written to config.json and apply at the next `personalclaw start`." }),
    notices,
    dialogHost,
    body,
  );
  return { notices, dialogHost, body, section };
}

/** The consent dialog for one loosening write: Allow resends it with confirm, Cancel writes nothing. */
function askConsent(settings, question, write) {
  const { notices, dialogHost } = settings;
  const detail = question.detail ?? {};
  const allow = el("button", {
    type: "button",
    class: "button-danger",
    "data-consent": "allow",
    text: "Allow",
    onClick: async () => {
      replaceChildren(dialogHost);
      await send(settings, { ...write, confirm: true });
    },
  });
  const dialog = el(
    "div",
    {
      class: "consent-dialog card",
      role: "alertdialog",
      "aria-labelledby": "consent-title",
      "aria-describedby": "consent-change",
      "data-consent-field": detail.field ?? "",
    },
    el("h3", { id: "consent-title", text: detail.title ?? "This change loosens security" }),
    el("p", { id: "consent-change", class: "consent-change", text: detail.change ?? "" }),
    detail.caution ? el("p", { class: "consent-caution notice notice-error", text: detail.caution }) : null,
    el("p", { class: "muted", text: "Nothing has been written. Allow it only if you meant to make this change." }),
    el(
      "div",
      { class: "toolbar" },
      allow,
      " ",
      el("button", {
        type: "button",
        "data-consent": "cancel",
        text: "Cancel",
        onClick: () => {
          replaceChildren(dialogHost);
          replaceChildren(notices, infoNotice("Nothing was changed."));
        },
      }),
    ),
  );
  replaceChildren(dialogHost, dialog);
  allow.focus();
}

async function send(settings, write) {
  const { notices } = settings;
  const answer = await settings.api.patch("/api/config/personalclaw", write);
  if (answer.ok) {
    replaceChildren(
      notices,
      infoNotice(`${write.path} saved; it applies ${answer.data.applies ?? "at the next start"}.`),
    );
    await refresh(settings);
    return;
  }
  if (answer.isConsentQuestion) return askConsent(settings, answer, write);
  if (!answer.isAuthRequired) replaceChildren(notices, errorNotice(answer));
}

function editor(settings, spec, value) {
  const id = `setting-${spec.path.replace(/[^a-z0-9]/gi, "-")}`;
  if (spec.type === "name_list") return nameListEditor(settings, spec, value, id);
  let input;
  if (spec.type === "enum") {
    input = el(
      "select",
      { id, "aria-label": spec.path },
      spec.values.map((v) => el("option", { value: v, selected: v === value, text: v })),
    );
  } else if (spec.type === "integer") {
    input = el("input", { type: "number", id, "aria-label": spec.path, min: spec.min, max: spec.max, step: 1 });
    input.value = String(value);
  } else {
    input = el("input", { type: "text", id, "aria-label": spec.path, autocomplete: "off" });
    input.value = String(value);
  }
  const save = () =>
    send(settings, { path: spec.path, value: spec.type === "integer" ? Number(input.value) : input.value });
  return el("span", { class: "inline-form" }, input, el("button", { type: "button", text: "Save", onClick: save }));
}

/** A list of names edited one name at a time: Remove beside each, Add for a new one. */
function nameListEditor(settings, spec, value, id) {
  const input = el("input", {
    type: "text",
    id,
    autocomplete: "off",
    "aria-label": `Add to ${spec.path}`,
    placeholder: spec.item ?? "name",
  });
  return el(
    "div",
    { class: "list-editor" },
    el(
      "ul",
      { class: "name-list" },
      value.map((name) =>
        el(
          "li",
          {},
          el("code", { text: name }),
          " ",
          el("button", {
            type: "button",
            text: "Remove",
            "aria-label": `Remove ${name}`,
            onClick: () => send(settings, { path: spec.path, remove: name }),
          }),
        ),
      ),
    ),
    el(
      "span",
      { class: "inline-form" },
      input,
      el("button", {
        type: "button",
        text: "Add",
        onClick: () => input.value.trim() && send(settings, { path: spec.path, add: input.value.trim() }),
      }),
    ),
  );
}

function row(settings, spec, value) {
  const bounds =
    spec.min !== undefined ? ` Between ${describeValue(spec, spec.min)} and ${describeValue(spec, spec.max)}.` : "";
  return el(
    "tr",
    { "data-setting": spec.path },
    el(
      "th",
      { scope: "row" },
      el("code", { text: spec.path }),
      spec.security ? el("span", { class: "badge badge-warn", text: "security" }) : null,
    ),
    el(
      "td",
      {},
      el("p", { class: "setting-meaning", text: `${spec.meaning}${bounds}` }),
      el(
        "p",
        { class: "muted setting-value" },
        "Now: ",
        el("span", { "data-value": "", text: describeValue(spec, value) }),
      ),
    ),
    el("td", {}, editor(settings, spec, value)),
  );
}

async function refresh(settings) {
  const answer = await settings.api.get("/api/config/personalclaw");
  if (!answer.ok) {
    if (!answer.isAuthRequired) replaceChildren(settings.body, errorNotice(answer));
    return;
  }
  const { config, schema } = answer.data;
  replaceChildren(
    settings.body,
    el(
      "table",
      { class: "settings-table" },
      el(
        "thead",
        {},
        el("tr", {}, el("th", { text: "Setting" }), el("th", { text: "Meaning" }), el("th", { text: "Change" })),
      ),
      el(
        "tbody",
        {},
        schema.map((spec) => row(settings, spec, valueAt(config, spec.path))),
      ),
    ),
  );
}
