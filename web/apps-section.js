// Apps: a card per installed app with enable/disable, open, restart, update, uninstall and
// backend health, each leading to the app's own page (app-detail-page.js).
import { el, errorNotice, infoNotice, listOf, replaceChildren } from "./element.js";
import { uninstallControl } from "./uninstall-control.js";
import { updateControl } from "./update-control.js";
import { jobsPart, mcpServersPart } from "./app-extensions.js";

/** The Open link of an enabled app's UI, naming its current revision. */
export function openLink(name, ui) {
  const revision = ui.revision ? `?rev=${encodeURIComponent(ui.revision)}` : "";
  // A new tab: the app's page replaces nothing of the dashboard, which stays where it was.
  return el("a", {
    class: "button-link",
    href: `/apps/${encodeURIComponent(name)}/${revision}`,
    target: "_blank",
    rel: "noopener",
    text: "Open",
    title: "Opens in a new tab",
    "aria-label": `Open ${name} (in a new tab)`,
  });
}

/** The backend's state as badges and facts: running, healthy, pid, restarts, last exit. */
export function backendSummary(backend, hasBackend) {
  if (!backend)
    return el("span", { class: "badge badge-neutral", text: hasBackend ? "backend not started" : "no backend" });
  const badges = [];
  if (backend.running && backend.healthy) badges.push(el("span", { class: "badge badge-ok", text: "healthy" }));
  else if (backend.running) badges.push(el("span", { class: "badge badge-warn", text: "running, not healthy" }));
  else badges.push(el("span", { class: "badge badge-bad", text: "stopped" }));
  const facts = [];
  if (typeof backend.pid === "number") facts.push(`pid ${backend.pid}`);
  if (typeof backend.port === "number") facts.push(`port ${backend.port}`);
  if (typeof backend.restarts === "number")
    facts.push(`${backend.restarts} ${backend.restarts === 1 ? "restart" : "restarts"}`);
  if (backend.exit && typeof backend.exit === "object") {
    const how = backend.exit.signal ? `signal ${backend.exit.signal}` : `code ${backend.exit.code}`;
    // A stop, restart or update ends it with SIGTERM (143): that is the owner's doing, not a crash.
    facts.push(backend.exit.requested === true ? `last stopped on request (${how}), not a crash` : `last exit ${how}`);
  }
  if (typeof backend.reason === "string" && backend.reason) facts.push(backend.reason);
  return el("span", {}, badges, facts.length ? el("span", { class: "muted", text: ` ${facts.join(" · ")}` }) : null);
}

export function requiresLine(requires) {
  const items = listOf(requires);
  if (items.length === 0) return null;
  return el(
    "p",
    { class: "requires" },
    "Needs: ",
    items.map((r, i) => [
      i > 0 ? ", " : "",
      el("span", {
        title: typeof r === "object" ? [r.why, r.how].filter(Boolean).join(" — ") : null,
        text: typeof r === "string" ? r : (r?.name ?? "?"),
      }),
    ]),
  );
}

/** Builds the Apps section; `statusChanged()` refreshes the header counts. */
export function appsSection(api, statusChanged) {
  const apps = { api, statusChanged, mcpRows: [] };
  Object.assign(
    apps,
    appsLayout(() => refresh(apps)),
  );
  return {
    section: apps.section,
    refresh: (opts) => refresh(apps, opts),
    /** Shows `notice` above the list (what another page did, such as an uninstall). */
    notify: (notice) => replaceChildren(apps.notices, notice),
  };
}

/** The section's frame: heading with Refresh, notices, the list (still loading) and the Install link. */
function appsLayout(onRefresh) {
  const notices = el("div", { class: "notices", "aria-live": "polite" });
  const listHost = el("div", { class: "section-body" }, el("p", { class: "muted", text: "Loading apps…" }));
  const section = el(
    "section",
    { class: "card", id: "apps", "aria-labelledby": "apps-title" },
    el(
      "div",
      { class: "section-head" },
      el("h2", { id: "apps-title", tabindex: "-1", text: "Apps" }),
      el("button", { type: "button", text: "Refresh", onClick: () => onRefresh() }),
    ),
    notices,
    listHost,
    el("p", {}, el("a", { class: "button-link", href: "#/install", text: "Install an app" })),
  );
  return { notices, listHost, section };
}

async function setEnabled(apps, app, enable) {
  const { api, notices } = apps;
  const answer = await api.post(`/api/apps/${encodeURIComponent(app.name)}/${enable ? "enable" : "disable"}`, {});
  if (!answer.ok) {
    if (!answer.isAuthRequired) replaceChildren(notices, errorNotice(answer));
    return;
  }
  replaceChildren(notices, infoNotice(`${app.displayName || app.name} is ${enable ? "enabled" : "disabled"}.`));
  await refresh(apps, { keepNotices: true });
  apps.statusChanged();
}

async function restart(apps, app) {
  const { api, notices } = apps;
  const answer = await api.post(`/api/apps/${encodeURIComponent(app.name)}/restart`, {});
  if (!answer.ok) {
    if (!answer.isAuthRequired) replaceChildren(notices, errorNotice(answer));
    return;
  }
  replaceChildren(notices, infoNotice(`${app.displayName || app.name}'s backend was restarted.`));
  await refresh(apps, { keepNotices: true });
}

/**
 * What an uninstall did, said after it: the app is gone, its data kept (and where) or deleted,
 * and the secret assignments it took back while the stored secrets stay.
 */
export function uninstalledNotice(app, answer) {
  const isDataKept = answer.data_kept === true;
  const takenBack = listOf(answer.secrets_taken_back).filter((s) => s && typeof s.as === "string");
  return el(
    "div",
    { class: "notice notice-info", role: "status", "data-uninstalled": app.name },
    el(
      "p",
      { class: "uninstalled-summary" },
      `Uninstalled ${app.displayName || app.name}: `,
      el("strong", { text: isDataKept ? "data kept" : "data deleted" }),
      ".",
    ),
    isDataKept
      ? el("p", {
          text: `Its data is parked in the PersonalClaw home at apps/.${app.name}.data; installing ${app.name} again offers to adopt it.`,
        })
      : null,
    takenBack.length > 0
      ? el("p", {
          "data-secrets-taken-back": app.name,
          text: `Its secret assignments were taken back (${takenBack
            .map(({ as, secret: stored }) => (stored && stored !== as ? `${stored} as ${as}` : (stored ?? as)))
            .join(", ")}); the stored secrets stay in Settings.`,
        })
      : null,
  );
}

/** Answers true when the app is gone, so its control need not ask again. */
async function uninstall(apps, app, purgeData) {
  const { api, notices } = apps;
  const answer = await api.delete(`/api/apps/${encodeURIComponent(app.name)}`, purgeData ? { purge_data: true } : {});
  if (!answer.ok) {
    if (!answer.isAuthRequired) replaceChildren(notices, errorNotice(answer));
    return false;
  }
  replaceChildren(notices, uninstalledNotice(app, answer.data));
  await refresh(apps, { keepNotices: true });
  apps.statusChanged();
  apps.section.querySelector("#apps-title")?.focus();
  return true;
}

function appItem(apps, app) {
  const name = typeof app.name === "string" ? app.name : "?";
  const label = app.displayName && app.displayName !== name ? `${app.displayName} (${name})` : name;
  const enabled = app.enabled === true;
  const facts = [
    app.version ? `version ${app.version}` : null,
    app.origin ?? null,
    app.lifecycle === "locked" ? "locked" : null,
  ]
    .filter(Boolean)
    .join(" · ");
  const backend = app.backend && typeof app.backend === "object" ? app.backend : null;
  const lastLines = listOf(backend?.lastLines);
  return el(
    "li",
    { class: "app", "data-app": name },
    el(
      "div",
      { class: "app-head" },
      el("h3", { class: "app-name" }, el("a", { href: `#/apps/${encodeURIComponent(name)}`, text: label })),
      el("span", {
        class: `badge ${enabled ? "badge-ok" : "badge-neutral"}`,
        text: enabled ? "enabled" : "disabled",
      }),
      app.native ? el("span", { class: "badge badge-neutral", text: "native" }) : null,
    ),
    facts ? el("p", { class: "muted", text: facts }) : null,
    requiresLine(app.requires),
    el("p", { class: "backend" }, "Backend: ", backendSummary(backend, app.hasBackend === true)),
    lastLines.length
      ? el(
          "details",
          {},
          el("summary", { text: "Last log lines" }),
          el("pre", { class: "log", text: lastLines.join("\n") }),
        )
      : null,
    mcpServersPart(
      apps.api,
      apps.mcpRows.filter((row) => row.app === name),
      () => refresh(apps, { keepNotices: true }),
    ),
    jobsPart(apps.api, name),
    appToolbar(apps, app, name, enabled),
  );
}

/** An app's buttons: Enable/Disable, Open, Restart, Update and Uninstall, as far as they apply. */
function appToolbar(apps, app, name, enabled) {
  return el(
    "div",
    { class: "toolbar" },
    el("button", {
      type: "button",
      text: enabled ? "Disable" : "Enable",
      "aria-label": `${enabled ? "Disable" : "Enable"} ${name}`,
      onClick: () => setEnabled(apps, app, !enabled),
    }),
    app.ui && enabled ? openLink(name, app.ui) : null,
    app.hasBackend && enabled
      ? el("button", {
          type: "button",
          text: "Restart",
          "aria-label": `Restart ${name}`,
          onClick: () => restart(apps, app),
        })
      : null,
    // A native (locked) app cannot be updated or uninstalled, only disabled; the gateway refuses it too.
    app.lifecycle === "locked"
      ? null
      : updateControl(
          apps.api,
          name,
          async (message) => {
            replaceChildren(apps.notices, infoNotice(message));
            await refresh(apps, { keepNotices: true });
            apps.statusChanged();
          },
          app,
        ),
    app.lifecycle === "locked" ? null : uninstallControl(name, (purgeData) => uninstall(apps, app, purgeData)),
  );
}

async function refresh(apps, opts = {}) {
  const { api, notices, listHost } = apps;
  const answer = await api.get("/api/apps");
  if (!opts.keepNotices) replaceChildren(notices);
  if (!answer.ok) {
    if (answer.isAuthRequired) return;
    replaceChildren(
      listHost,
      answer.status === 404 && answer.code === "not_found"
        ? el("p", { class: "muted", text: "This gateway does not list apps yet." })
        : errorNotice(answer),
    );
    return;
  }
  const installed = listOf(answer.data.apps);
  const mcp = await api.get("/api/mcp");
  apps.mcpRows = mcp.ok ? listOf(mcp.data.servers) : [];
  // A refresh (a live frame, say) must not throw away what the owner is in the middle of: an
  // open Update form or review, or an Uninstall question, moves into the new list as it is.
  const open = [...listHost.querySelectorAll("[data-control], [data-uninstall]")].filter((control) =>
    control.querySelector("form, input, .update-review > *"),
  );
  // Moving a node out of the page drops its focus: what the owner was on gets it back after the move.
  const focused = open.find((control) => control.contains(document.activeElement)) ? document.activeElement : null;
  replaceChildren(
    listHost,
    installed.length === 0
      ? el(
          "div",
          { class: "empty-state" },
          el("p", { text: "No apps installed yet." }),
          el("p", {
            class: "muted",
            text: "Install one from a folder on this machine: you review what it gets before anything is installed.",
          }),
        )
      : el(
          "ul",
          { class: "app-list" },
          installed.map((app) => appItem(apps, app)),
        ),
  );
  for (const control of open) {
    const key = control.dataset.control
      ? `[data-control="${CSS.escape(control.dataset.control)}"]`
      : `[data-uninstall="${CSS.escape(control.dataset.uninstall)}"]`;
    listHost.querySelector(key)?.replaceWith(control);
  }
  if (focused instanceof HTMLElement && focused.isConnected) focused.focus({ preventScroll: true });
}
