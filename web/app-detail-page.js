// One app's page: its status and backend (restarts, last exit), the live last lines of its
// backend log with search, what the owner consented to, data an earlier install left parked,
// the secrets it asks for, the folders granted to it, its MCP tools and their policy, its MCP servers and jobs, and Update,
// Restart, Enable/Disable and Uninstall.
import { el, errorNotice, infoNotice, listOf, replaceChildren } from "./element.js";
import { formatRelative, formatTime } from "./format.js";
import { installReview } from "./install-review.js";
import { backendSummary, openLink, requiresLine, uninstalledNotice } from "./apps-section.js";
import { uninstallControl } from "./uninstall-control.js";
import { updateControl } from "./update-control.js";
import { sourceUpdatePart } from "./source-update-part.js";
import { jobsPart, mcpServersPart } from "./app-extensions.js";
import { foldersPart } from "./folders-part.js";
import { appSecretsPart } from "./app-secrets-part.js";
import { mcpToolsPart } from "./mcp-tools-part.js";

const LOG_POLL_MS = 3000;
const LOG_LINES = 200;

/**
 * Builds the page of app `name`; `changed()` re-reads the Apps list and the header counts;
 * `openAdd(spec, env)` takes a newer version of its package source to the Add page.
 */
export function appDetailPage(api, name, changed, openAdd) {
  const page = {
    api,
    name,
    changed,
    path: `/api/apps/${encodeURIComponent(name)}`,
    pollTimer: null,
    isShown: false,
    lastQuery: "",
  };
  // A grant restarts the backend: the summary above is read again after one.
  page.folders = foldersPart(api, name, () => refresh(page, { keepNotices: true, statusOnly: true }));
  page.tools = mcpToolsPart(api, name);
  // Assigning a secret restarts the backend: the summary above is read again after one.
  page.secrets = appSecretsPart(api, name, () => refresh(page, { keepNotices: true, statusOnly: true }));
  Object.assign(
    page,
    pageLayout(
      name,
      [page.secrets.section, page.folders.section, page.tools.section],
      () => void readLog(page),
      sourceUpdatePart(api, name, openAdd),
    ),
  );
  return {
    section: page.section,
    refresh: (opts) => refresh(page, opts),
    /** Re-reads the tools part alone (a tool call or an answered approval). */
    refreshTools: () => page.tools.refresh(),
    /** Starts the live log while the page is shown. */
    start() {
      page.isShown = true;
      if (page.pollTimer === null) poll(page);
    },
    stop() {
      page.isShown = false;
      if (page.pollTimer !== null) clearTimeout(page.pollTimer);
      page.pollTimer = null;
    },
  };
}

/** The page's frame: breadcrumb, title, notices, summary, toolbar and its parts, each still empty. */
function pageLayout(name, ownParts, searchLog, sourcePart) {
  const notices = el("div", { class: "notices", "aria-live": "polite" });
  const title = el("h2", { id: "app-detail-title", tabindex: "-1", text: name });
  const summary = el("div", { class: "section-body" }, el("p", { class: "muted", text: "Loading…" }));
  const toolbar = el("div", { class: "toolbar" });
  const log = logPart(name, searchLog);
  const consentHost = el("div", {}, el("p", { class: "muted", text: "Loading…" }));
  const parkedHost = el("div", {});
  const extensionsHost = el("div", {});
  const section = el(
    "section",
    { class: "card app-detail", id: "app-detail", "data-app": name, "aria-labelledby": "app-detail-title" },
    el("p", { class: "breadcrumb" }, el("a", { href: "#/apps", text: "Apps" }), " / ", el("span", { text: name })),
    el("div", { class: "section-head" }, title),
    notices,
    summary,
    toolbar,
    log.part,
    detailPart("app-consent-title", "What you consented to", consentHost),
    detailPart("app-source-title", "Its package source", sourcePart),
    ownParts,
    detailPart("app-parked-title", "Parked data", parkedHost),
    extensionsHost,
  );
  return {
    section,
    notices,
    title,
    summary,
    toolbar,
    search: log.search,
    logState: log.state,
    logView: log.view,
    consentHost,
    parkedHost,
    extensionsHost,
  };
}

/** The Backend log part: a search form, a status line and the last lines; `searchLog()` reads them again. */
function logPart(name, searchLog) {
  const search = el("input", {
    id: "app-log-search",
    type: "search",
    autocomplete: "off",
    spellcheck: "false",
    placeholder: "text in a line",
  });
  const state = el("p", { class: "muted", role: "status" });
  // A log the owner reads at their pace: re-read every few seconds, so it is not announced live.
  const view = el("pre", {
    class: "log log-view",
    role: "log",
    "aria-live": "off",
    tabindex: "0",
    "aria-label": `Last lines of the backend log of ${name}`,
  });
  const part = el(
    "section",
    { class: "detail-part", "aria-labelledby": "app-log-title" },
    el("h3", { id: "app-log-title", text: "Backend log" }),
    el(
      "form",
      {
        class: "inline-form",
        role: "search",
        onSubmit: (event) => {
          event.preventDefault();
          searchLog();
        },
      },
      el("label", { for: "app-log-search", text: "Search the log" }),
      search,
      el("button", { type: "submit", text: "Search" }),
    ),
    state,
    view,
  );
  return { search, state, view, part };
}

/** One titled part of the page around `host`. */
function detailPart(titleId, titleText, host) {
  return el(
    "section",
    { class: "detail-part", "aria-labelledby": titleId },
    el("h3", { id: titleId, text: titleText }),
    host,
  );
}

async function act(page, answer, doneText) {
  if (!answer.ok) {
    if (!answer.isAuthRequired) replaceChildren(page.notices, errorNotice(answer));
    return false;
  }
  replaceChildren(page.notices, infoNotice(doneText));
  await refresh(page, { keepNotices: true });
  page.changed();
  return true;
}

function controls(page, app) {
  const { api, name, path, notices, changed } = page;
  const enabled = app.enabled === true;
  const label = app.displayName || name;
  const isLocked = app.lifecycle === "locked";
  return [
    app.ui && enabled ? openLink(name, app.ui) : null,
    el("button", {
      type: "button",
      text: enabled ? "Disable" : "Enable",
      "aria-label": `${enabled ? "Disable" : "Enable"} ${name}`,
      onClick: async () =>
        act(
          page,
          await api.post(`${path}/${enabled ? "disable" : "enable"}`, {}),
          `${label} is ${enabled ? "disabled" : "enabled"}.`,
        ),
    }),
    app.hasBackend && enabled
      ? el("button", {
          type: "button",
          text: "Restart",
          "aria-label": `Restart ${name}`,
          onClick: async () => act(page, await api.post(`${path}/restart`, {}), `${label}'s backend was restarted.`),
        })
      : null,
    // A native (locked) app cannot be updated or uninstalled, only disabled; the gateway refuses it too.
    isLocked
      ? null
      : updateControl(
          api,
          name,
          async (message) => {
            replaceChildren(notices, infoNotice(message));
            await refresh(page, { keepNotices: true });
            changed();
          },
          app,
        ),
    isLocked
      ? null
      : uninstallControl(name, async (purgeData) => {
          const answer = await api.delete(path, purgeData ? { purge_data: true } : {});
          if (!answer.ok) {
            if (!answer.isAuthRequired) replaceChildren(notices, errorNotice(answer));
            return false;
          }
          changed(uninstalledNotice(app, answer.data));
          location.hash = "#/apps";
          return true;
        }),
  ];
}

function summaryOf(app) {
  const backend = app.backend && typeof app.backend === "object" ? app.backend : null;
  const facts = [
    ["State", app.enabled === true ? "enabled" : "disabled"],
    ["Version", app.version ?? "unknown"],
    ["Origin", app.origin ?? "unknown"],
    ["Installed", app.installedAt ? formatTime(app.installedAt) : "unknown"],
    ["Backend started", backend?.startedAt ? formatRelative(backend.startedAt) : "not running"],
  ];
  return [
    el(
      "dl",
      { class: "facts" },
      facts.map(([term, value]) => el("div", {}, el("dt", { text: term }), el("dd", { text: value }))),
    ),
    requiresLine(app.requires),
    el("p", { class: "backend" }, "Backend: ", backendSummary(backend, app.hasBackend === true)),
  ];
}

async function readLog(page) {
  const { logView, logState } = page;
  const query = page.search.value.trim();
  const answer = await page.api.get(
    `${page.path}/logs?lines=${LOG_LINES}${query ? `&q=${encodeURIComponent(query.slice(0, 200))}` : ""}`,
  );
  if (!answer.ok) {
    if (!answer.isAuthRequired) replaceChildren(logState, errorNotice(answer));
    return;
  }
  const lines = listOf(answer.data.lines).map(String);
  // Keep the reader's place: follow the end only when they were already at it or the search changed.
  const wasAtEnd = logView.scrollTop + logView.clientHeight >= logView.scrollHeight - 4;
  logView.textContent = lines.join("\n");
  if (wasAtEnd || query !== page.lastQuery) logView.scrollTop = logView.scrollHeight;
  page.lastQuery = query;
  logState.textContent =
    lines.length === 0
      ? query
        ? `No line of the backend log holds “${query}”.`
        : "The backend has written nothing to the log yet."
      : `${lines.length} ${lines.length === 1 ? "line" : "lines"}${query ? ` holding “${query}”` : ""}, newest last; updated ${new Date().toLocaleTimeString()}.`;
}

async function readConsent(page) {
  const { consentHost } = page;
  const answer = await page.api.get(`${page.path}/consent`);
  if (!answer.ok) {
    if (!answer.isAuthRequired) replaceChildren(consentHost, errorNotice(answer));
    return;
  }
  const review = answer.data.review && typeof answer.data.review === "object" ? answer.data.review : null;
  replaceChildren(
    consentHost,
    review
      ? installReview(review, answer.data.digest)
      : el("p", { class: "muted", text: "No review was kept for this install; its consent digest is:" }),
    review ? null : el("p", { class: "mono digest", text: String(answer.data.digest ?? "") }),
  );
}

async function readParked(page) {
  const { parkedHost } = page;
  const answer = await page.api.get("/api/apps/parked");
  if (!answer.ok) {
    if (!answer.isAuthRequired) replaceChildren(parkedHost, errorNotice(answer));
    return;
  }
  const mine = listOf(answer.data.parked).filter((p) => p.name === page.name);
  replaceChildren(
    parkedHost,
    mine.length === 0
      ? el("p", { class: "muted", text: "No data of an earlier install of this app is parked." })
      : el(
          "ul",
          {},
          mine.map((p) =>
            el("li", {
              text: `data of version ${p.version ?? "unknown"}, parked ${p.parkedAt ? formatTime(p.parkedAt) : "at an unknown time"}`,
            }),
          ),
        ),
  );
}

async function readExtensions(page) {
  const { api, name } = page;
  const mcp = await api.get("/api/mcp");
  const rows = mcp.ok ? listOf(mcp.data.servers).filter((row) => row.app === name) : [];
  replaceChildren(
    page.extensionsHost,
    mcpServersPart(api, rows, () => readExtensions(page)),
    jobsPart(api, name),
  );
}

/** The page of an app the gateway could not answer for: why, and every part hidden. */
function showUnanswered(page, answer) {
  replaceChildren(
    page.summary,
    answer.code === "app_not_found"
      ? el(
          "div",
          { class: "empty-state" },
          el("p", { text: `No app named ${page.name} is installed.` }),
          el("p", {}, el("a", { href: "#/apps", text: "Back to the Apps page" })),
        )
      : errorNotice(answer),
  );
  replaceChildren(page.toolbar);
  for (const part of page.section.querySelectorAll(".detail-part")) part.hidden = true;
  replaceChildren(page.extensionsHost);
}

async function refresh(page, opts = {}) {
  const { name, toolbar } = page;
  const answer = await page.api.get(page.path);
  if (!opts.keepNotices) replaceChildren(page.notices);
  if (!answer.ok) {
    if (answer.isAuthRequired) return;
    showUnanswered(page, answer);
    return;
  }
  const app = answer.data;
  page.title.textContent = app.displayName && app.displayName !== name ? `${app.displayName} (${name})` : name;
  replaceChildren(page.summary, summaryOf(app));
  // An open Update form or Uninstall question survives a live re-read.
  const open = toolbar.querySelector("[data-control] form, [data-uninstall] input");
  if (!open) replaceChildren(toolbar, controls(page, app));
  if (!opts.statusOnly)
    await Promise.all([
      readLog(page),
      readConsent(page),
      readParked(page),
      readExtensions(page),
      page.secrets.refresh(),
      page.folders.refresh(),
      page.tools.refresh(),
    ]);
}

function poll(page) {
  page.pollTimer = setTimeout(async () => {
    if (!page.isShown) return;
    await readLog(page);
    if (page.isShown) poll(page);
  }, LOG_POLL_MS);
}
