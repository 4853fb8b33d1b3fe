// The dashboard entry: asks the gateway who we are, then shows either the sign-in
// instructions (AUTH-04) or the signed-in pages, one at a time, chosen by the URL's hash
// (#/apps, #/apps/<name>, #/install, ...), so links, reload and the back button work. Any
// answer that says to sign in (X-Auth-Required) returns the page to the instructions.
import { createApiClient } from "./api-client.js";
import { el, errorNotice, replaceChildren } from "./element.js";
import { signInView } from "./sign-in-view.js";
import { mountStatusHeader } from "./status-header.js";
import { appsSection } from "./apps-section.js";
import { appDetailPage } from "./app-detail-page.js";
import { installPage } from "./install-page.js";
import { addPage } from "./add-page.js";
import { storePage } from "./store-page.js";
import { routeOf } from "./routes.js";
import { devicesSection } from "./devices-section.js";
import { securityLogSection } from "./security-log-section.js";
import { inboxSection } from "./inbox-section.js";
import { settingsSection } from "./settings-section.js";
import { secretsSection } from "./secrets-section.js";
import { connectLiveEvents } from "./live-events.js";
import { pokeInstallProgress } from "./install-progress.js";

// index.html always has these three.
const main = /** @type {HTMLElement} */ (document.getElementById("app"));
const statusHost = /** @type {HTMLElement} */ (document.getElementById("status"));
const nav = /** @type {HTMLElement} */ (document.getElementById("nav"));

let statusHeader = null;
let liveEvents = null;
/** The signed-in pages, built once per sign-in; null while signed out. */
let pages = null;
/** The page of one app while it is shown. */
let detail = null;
/** "loading", "sign-in" or "dashboard"; several refused requests show the sign-in view once. */
let view = "loading";

function showSignIn(note) {
  if (view === "sign-in") return;
  const wasSignedIn = view === "dashboard";
  view = "sign-in";
  main.dataset.view = view;
  statusHeader?.stop();
  statusHeader = null;
  liveEvents?.stop();
  liveEvents = null;
  statusHost.hidden = true;
  statusHost.replaceChildren();
  nav.hidden = true;
  detail?.stop();
  detail = null;
  pages = null;
  replaceChildren(main, signInView(note));
  document.title = "Sign in · PersonalClaw";
  // The section the owner was using is gone; move focus to what replaced it.
  if (wasSignedIn) document.getElementById("sign-in-title")?.focus();
}

const api = createApiClient(showSignIn);

async function showDashboard() {
  const header = mountStatusHeader(statusHost, api);
  statusHeader = header;
  const first = await header.refresh();
  if (!first.ok) {
    header.stop();
    if (statusHeader === header) statusHeader = null;
    if (!first.isAuthRequired)
      replaceChildren(
        main,
        errorNotice(first),
        el("button", { type: "button", text: "Try again", onClick: showDashboard }),
      );
    return;
  }
  view = "dashboard";
  main.dataset.view = view;
  statusHost.hidden = false;
  nav.hidden = false;
  const refreshStatus = () => statusHeader?.refresh();
  const apps = appsSection(api, refreshStatus);
  // `notice`: what a page did that the Apps page says next (an uninstall from an app's page).
  const changed = (notice) => {
    if (notice) apps.notify(notice);
    void apps.refresh({ keepNotices: true });
    refreshStatus();
  };
  pages = {
    apps,
    install: installPage(api, async () => changed()),
    add: addPage(api, async () => changed()),
    devices: devicesSection(api, showSignIn),
    securityLog: securityLogSection(api),
    inbox: inboxSection(api, document.getElementById("nav-inbox-count")),
    settings: settingsSection(api),
    secrets: secretsSection(api),
    changed,
    // A source to add (from the Store, or an app's newer version) opens the Add page with it filled in.
    openAdd: (spec, env) => {
      pages?.add.prefill(spec, env);
      location.hash = "#/add";
    },
    store: storePage(api, (spec) => pages?.openAdd(spec)),
  };
  showRoute({ isFirst: true });
  await Promise.all([
    pages.inbox.refresh(),
    apps.refresh(),
    pages.devices.refresh(),
    pages.settings.refresh(),
    pages.secrets.refresh(),
    pages.securityLog.refresh(),
  ]);
  pages?.inbox.start();
  if (view === "dashboard") startLiveEvents(pages, refreshStatus);
}

/** Shows the page the hash names; focus moves to its heading unless this is the first page shown. */
function showRoute({ isFirst = false } = {}) {
  if (pages === null) return;
  const route = routeOf(location.hash);
  detail?.stop();
  detail = null;
  let shown;
  if (route.page === "app") {
    const page = appDetailPage(api, route.name, pages.changed, pages.openAdd);
    detail = page;
    shown = [page.section];
    // Its live log starts once it has loaded, unless another page replaced it meanwhile.
    void page.refresh().then(() => {
      if (detail === page) page.start();
    });
  } else if (route.page === "settings") shown = [pages.settings.section, pages.secrets.section];
  else if (route.page === "not-found")
    shown = [
      el(
        "section",
        { class: "card", "aria-labelledby": "not-found-title" },
        el("h2", { id: "not-found-title", tabindex: "-1", text: "No such page" }),
        el("p", {}, "The dashboard has no page at this address. ", el("a", { href: "#/apps", text: "Go to Apps" })),
      ),
    ];
  else shown = [pages[route.section].section];
  // The Store asks its registry when it is first shown, not at every sign-in.
  if (route.section === "store") pages.store.shown();
  replaceChildren(main, shown);
  document.title = `${route.title} · PersonalClaw`;
  const links = /** @type {NodeListOf<HTMLAnchorElement>} */ (nav.querySelectorAll("a[data-page]"));
  for (const link of links) {
    if (link.dataset.page === route.nav) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  if (!isFirst) /** @type {HTMLElement} */ (main.querySelector("h2[tabindex]") ?? main).focus();
}

window.addEventListener("hashchange", () => showRoute());
// The skip link moves focus to the page's content; following it as a link would change the route.
document.querySelector(".skip-link")?.addEventListener("click", (event) => {
  event.preventDefault();
  main.focus();
});

/** Which sections a frame asks to re-read; each re-read is coalesced into one per 150 ms. */
function startLiveEvents(sections, refreshStatus) {
  const pending = new Set();
  let timer = null;
  const refreshers = {
    // A live re-read keeps the notices on screen: the owner's own last answer stays readable.
    apps: () => {
      void sections.apps.refresh({ keepNotices: true });
      void detail?.refresh({ keepNotices: true, statusOnly: true });
    },
    status: () => refreshStatus(),
    devices: () => sections.devices.refresh({ keepNotices: true }),
    securityLog: () => sections.securityLog.refresh(),
    inbox: () => sections.inbox.refresh({ keepNotices: true }),
    mcpTools: () => void detail?.refreshTools?.(),
  };
  function later(...names) {
    for (const name of names) pending.add(name);
    if (timer !== null) return;
    timer = setTimeout(() => {
      timer = null;
      const due = [...pending];
      pending.clear();
      // Signed out meanwhile: the sign-in view replaced the sections; nothing is left to re-read.
      if (view !== "dashboard") return;
      for (const name of due) refreshers[name]();
    }, 150);
  }
  liveEvents = connectLiveEvents((frame) => {
    if (frame.type.startsWith("app.") || frame.type === "backend.health_changed") later("apps", "status");
    else if (frame.type === "install.progress") pokeInstallProgress(String(frame.data.install_id ?? ""));
    else if (frame.type === "security_log.appended") later("securityLog");
    else if (frame.type.startsWith("session.")) later("devices");
    else if (frame.type.startsWith("approval.")) later("inbox", "mcpTools");
    else if (frame.type === "mcp.tool_called") later("mcpTools");
    else if (frame.type === "hub.reconnected") later("apps", "status", "devices", "securityLog", "inbox");
    else if (frame.type === "hub.offline") {
      // Only the status: if this session ended, its answer returns the page to sign-in.
      pending.clear();
      later("status");
    }
  });
  nav.append(liveEvents.indicator);
}

showDashboard();
