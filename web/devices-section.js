// Devices: every owner sign-in — its name or browser and system, kind, first address, when
// it was created and used — with naming, sign-out per row, sign out others and everywhere.
import { el, errorNotice, infoNotice, replaceChildren, timeElement } from "./element.js";
import { pairingCodePart } from "./pairing-code-part.js";

function timeCell(value) {
  return el("td", {}, timeElement(value));
}

/**
 * A button that asks once more before acting: the first press shows "Yes" and "Cancel".
 * Used for actions that end sign-ins the owner cannot get back without a new link.
 */
function confirmingButton(label, question, confirmLabel, action) {
  const wrap = el("span", { class: "confirming" });
  const showButton = () =>
    replaceChildren(
      wrap,
      el("button", {
        type: "button",
        class: "button-danger",
        text: label,
        onClick: () => {
          replaceChildren(
            wrap,
            el("span", { class: "confirm-question", text: question }),
            " ",
            el("button", { type: "button", class: "button-danger", text: confirmLabel, onClick: action }),
            " ",
            el("button", {
              type: "button",
              text: "Cancel",
              onClick: () => {
                showButton();
                wrap.querySelector("button")?.focus();
              },
            }),
          );
          wrap.querySelector(".button-danger")?.focus();
        },
      }),
    );
  showButton();
  return wrap;
}

/** Builds the Devices section; `signedOut(note)` shows the sign-in view after this browser signs out. */
export function devicesSection(api, signedOut) {
  const devices = { api, signedOut };
  Object.assign(
    devices,
    devicesLayout(() => refresh(devices)),
  );
  // Kept apart from the body a refresh rewrites: a code shown once stays on the page.
  const pairing = pairingCodePart(api);
  if (pairing !== null) devices.section.append(pairing);
  return { section: devices.section, refresh: (opts) => refresh(devices, opts) };
}

/** The section's frame: heading with Refresh, notices and the body (still loading). */
function devicesLayout(onRefresh) {
  const notices = el("div", { class: "notices", "aria-live": "polite" });
  const body = el("div", { class: "section-body" }, el("p", { class: "muted", text: "Loading devices…" }));
  const section = el(
    "section",
    { class: "card", id: "devices", "aria-labelledby": "devices-title" },
    el(
      "div",
      { class: "section-head" },
      el("h2", { id: "devices-title", text: "Devices" }),
      el("button", { type: "button", text: "Refresh", onClick: () => onRefresh() }),
    ),
    notices,
    body,
  );
  return { notices, body, section };
}

async function act(devices, path, doneText) {
  const answer = await devices.api.post(path, {});
  if (!answer.ok) {
    if (!answer.isAuthRequired) replaceChildren(devices.notices, errorNotice(answer));
    return answer;
  }
  replaceChildren(devices.notices, infoNotice(doneText(answer.data)));
  return answer;
}

function endedText(data) {
  const n = typeof data.signed_out === "number" ? data.signed_out : 0;
  return `Signed out ${n} ${n === 1 ? "session" : "sessions"}.`;
}

async function signOutThisBrowser(devices) {
  const answer = await devices.api.post("/api/auth/logout", {});
  if (answer.ok) devices.signedOut({ message: "You signed out of this browser." });
  else if (!answer.isAuthRequired) replaceChildren(devices.notices, errorNotice(answer));
}

async function signOutEverywhere(devices) {
  const answer = await devices.api.post("/api/auth/signout-everywhere", {});
  if (answer.ok)
    devices.signedOut({
      message: `Signed out everywhere: ${endedText(answer.data)
        .replace(/^Signed out /, "")
        .replace(/\.$/, "")} ended.`,
    });
  else if (!answer.isAuthRequired) replaceChildren(devices.notices, errorNotice(answer));
}

/** The device's name, or what its User-Agent says it is, or what kind of sign-in it is. */
function deviceLabel(session) {
  if (typeof session.name === "string" && session.name !== "") return session.name;
  const parts = [session.browser, session.os].filter((v) => typeof v === "string" && v !== "");
  if (parts.length === 2) return `${parts[0]} on ${parts[1]}`;
  if (parts.length === 1) return parts[0];
  return session.kind === "token" ? "Sign-in link" : "Browser";
}

function kindText(session) {
  if (session.kind === "browser") return "browser sign-in";
  if (session.issuer === "startup") return "sign-in link from start";
  if (session.issuer === "cli") return "link from personalclaw token";
  return "owner token";
}

/** A Rename button that turns into a small labelled form in its cell. */
function renameControl(devices, session, label) {
  const cell = el("span", { class: "rename" });
  const showButton = () =>
    replaceChildren(
      cell,
      el("button", {
        type: "button",
        text: "Rename",
        "aria-label": `Rename ${label}`,
        onClick: () => showRenameForm(devices, session, cell, showButton),
      }),
    );
  showButton();
  return cell;
}

/** The Rename form in `cell`: Save names the device, Cancel puts the button back (`showButton`). */
function showRenameForm(devices, session, cell, showButton) {
  const { notices } = devices;
  const inputId = `device-name-${session.id}`;
  const input = el("input", {
    id: inputId,
    type: "text",
    maxlength: "64",
    autocomplete: "off",
    value: typeof session.name === "string" ? session.name : "",
  });
  replaceChildren(
    cell,
    el(
      "form",
      {
        class: "inline-form",
        onSubmit: async (event) => {
          event.preventDefault();
          const value = input.value.trim();
          const answer = await devices.api.post(`/api/auth/sessions/${encodeURIComponent(session.id)}/name`, {
            name: value === "" ? null : value,
          });
          if (!answer.ok) {
            if (!answer.isAuthRequired) replaceChildren(notices, errorNotice(answer));
            input.focus();
            return;
          }
          replaceChildren(
            notices,
            infoNotice(value === "" ? "The device name was cleared." : `Named the device ${value}.`),
          );
          await refresh(devices, { keepNotices: true });
        },
      },
      el("label", { for: inputId, text: "Device name" }),
      input,
      el("button", { type: "submit", text: "Save" }),
      el("button", {
        type: "button",
        text: "Cancel",
        onClick: () => {
          showButton();
          cell.querySelector("button")?.focus();
        },
      }),
    ),
  );
  input.focus();
}

function row(devices, session) {
  const isCurrent = session.current === true;
  const name = deviceLabel(session);
  const signOut = isCurrent
    ? el("button", {
        type: "button",
        text: "Sign out",
        "aria-label": "Sign out this browser",
        onClick: () => signOutThisBrowser(devices),
      })
    : el("button", {
        type: "button",
        text: "Sign out",
        "aria-label": `Sign out ${name} ${session.id}`,
        onClick: async () => {
          const answer = await act(devices, `/api/auth/sessions/${encodeURIComponent(session.id)}/signout`, endedText);
          if (answer.ok) await refresh(devices, { keepNotices: true });
        },
      });
  return el(
    "tr",
    { class: isCurrent ? "current" : null, "data-session-id": session.id, "aria-current": isCurrent ? "true" : null },
    el(
      "td",
      {},
      el("span", { class: "session-name", text: name }),
      isCurrent ? el("span", { class: "badge badge-ok", text: "This browser" }) : null,
      el("div", { class: "muted", text: kindText(session) }),
      typeof session.user_agent === "string"
        ? el("div", { class: "muted user-agent", title: session.user_agent, text: session.user_agent })
        : null,
      el("div", { class: "muted mono", text: session.id }),
    ),
    el("td", {
      class: "mono",
      text: typeof session.first_address === "string" ? session.first_address : "not opened in a browser",
    }),
    timeCell(session.created_at),
    timeCell(session.last_used_at),
    timeCell(session.expires_at),
    el("td", { class: "actions" }, renameControl(devices, session, name), " ", signOut),
  );
}

function sessionsTable(devices, sessions) {
  if (sessions.length === 0) return el("p", { class: "muted", text: "No sign-ins." });
  return el(
    "table",
    { class: "devices-table" },
    el("caption", { class: "visually-hidden", text: "Signed-in devices and tokens" }),
    el(
      "thead",
      {},
      el(
        "tr",
        {},
        ["Device", "First address", "Created", "Last used", "Expires", "Actions"].map((h) =>
          el("th", { scope: "col", text: h }),
        ),
      ),
    ),
    el(
      "tbody",
      {},
      sessions.map((session) => row(devices, session)),
    ),
  );
}

/** Sign out all others and Sign out everywhere, each asking once more. */
function signOutToolbar(devices) {
  return el(
    "div",
    { class: "toolbar" },
    confirmingButton(
      "Sign out all others",
      "Sign out every other device and token?",
      "Yes, sign out others",
      async () => {
        const done = await act(devices, "/api/auth/signout-others", endedText);
        if (done.ok) await refresh(devices, { keepNotices: true });
      },
    ),
    confirmingButton(
      "Sign out everywhere",
      "Sign out every device, this browser included?",
      "Yes, sign out everywhere",
      () => signOutEverywhere(devices),
    ),
  );
}

async function refresh(devices, opts = {}) {
  const { body } = devices;
  const answer = await devices.api.get("/api/auth/sessions");
  if (!opts.keepNotices) replaceChildren(devices.notices);
  if (!answer.ok) {
    if (!answer.isAuthRequired) replaceChildren(body, errorNotice(answer));
    return;
  }
  const sessions = Array.isArray(answer.data.sessions) ? answer.data.sessions : [];
  replaceChildren(body, el("div", { class: "table-wrap" }, sessionsTable(devices, sessions)), signOutToolbar(devices));
}
