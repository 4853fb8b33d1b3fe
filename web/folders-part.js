// An app's folders on its page: each folder need it declares, the folder the owner granted to
// it (read-only or read-write) with a way to take it back, and a path field to grant one. The
// browser cannot open a folder picker on the gateway's machine (a page sees only the files the
// browser hands it, not host paths), so the owner types the folder's full path; the gateway's
// bridge checks it and refuses links, the PersonalClaw home, system folders and whole homes.
import { el, errorNotice, infoNotice, listOf, replaceChildren } from "./element.js";

/** The Folders part of the app page of `appName`; answers {section, refresh}. `changed()` re-reads the page. */
export function foldersPart(api, appName, changed) {
  const base = `/api/apps/${encodeURIComponent(appName)}/folders`;
  const notices = el("div", { class: "notices", "aria-live": "polite" });
  const body = el("div", {}, el("p", { class: "muted", text: "Loading…" }));
  const section = el(
    "section",
    { class: "detail-part", "aria-labelledby": "app-folders-title", id: "app-folders" },
    el("h3", { id: "app-folders-title", text: "Folders" }),
    notices,
    body,
  );

  async function act(answer, doneText) {
    if (!answer.ok) {
      if (!answer.isAuthRequired) replaceChildren(notices, errorNotice(answer));
      return;
    }
    replaceChildren(notices, infoNotice(doneText));
    await refresh();
    await changed();
  }

  function grantForm(need) {
    const id = `folder-path-${need.name}`;
    const path = el("input", {
      id,
      type: "text",
      name: "path",
      autocomplete: "off",
      spellcheck: "false",
      required: "",
      pattern: "/.*",
      placeholder: "/home/you/Documents",
      "aria-describedby": `${id}-help`,
    });
    const readWrite = el("input", { id: `${id}-rw`, type: "checkbox", name: "read-write" });
    return el(
      "form",
      {
        class: "inline-form",
        "data-need": need.name,
        onSubmit: async (event) => {
          event.preventDefault();
          const folder = path.value.trim();
          if (!folder.startsWith("/")) {
            replaceChildren(
              notices,
              errorNotice({ code: "folder_path_invalid", message: "Type the folder's full path, starting with /." }),
            );
            return;
          }
          const access = readWrite.checked ? "read-write" : "read";
          await act(
            await api.put(`${base}/${encodeURIComponent(need.name)}`, { path: folder, access }),
            `${appName} now sees ${folder} at /folders/${need.name}, ${access === "read-write" ? "read-write" : "read-only"}.`,
          );
        },
      },
      el("label", { for: id, text: `Folder for ${need.name}` }),
      path,
      need.access === "read-write"
        ? el("span", {}, readWrite, el("label", { for: `${id}-rw`, text: "read-write" }))
        : null,
      el("button", { type: "submit", text: "Grant" }),
      el("p", {
        class: "muted",
        id: `${id}-help`,
        text: "The full path on the gateway's machine: a browser cannot open a folder picker there. Read-only unless you tick read-write.",
      }),
    );
  }

  function needItem(need) {
    const grant = need.grant;
    return el(
      "li",
      { "data-need": need.name },
      el("p", {}, el("code", { text: need.inside }), " — ", el("span", { text: need.why }), ` (asks ${need.access})`),
      grant
        ? el(
            "p",
            { class: "folder-grant" },
            el("span", {
              text: `Granted: ${grant.path}, ${grant.access === "read-write" ? "read-write" : "read-only"}. `,
            }),
            el("button", {
              type: "button",
              text: "Take back",
              "aria-label": `Take back the folder granted for ${need.name}`,
              onClick: async () =>
                act(
                  await api.delete(`${base}/${encodeURIComponent(need.name)}`, {}),
                  `${appName} no longer sees ${grant.path}.`,
                ),
            }),
          )
        : el("p", { class: "muted", text: "Not granted: the app sees no folder here." }),
      grantForm(need),
    );
  }

  async function refresh() {
    const answer = await api.get(base);
    if (!answer.ok) {
      if (!answer.isAuthRequired) replaceChildren(body, errorNotice(answer));
      return;
    }
    const needs = listOf(answer.data.folders);
    section.hidden = needs.length === 0;
    replaceChildren(body, el("ul", { class: "folder-needs" }, needs.map(needItem)));
  }

  return { section, refresh };
}
