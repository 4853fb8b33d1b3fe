// The dashboard entry: asks the gateway who we are, then shows either the sign-in
// instructions (AUTH-04) or the signed-in sections. Any answer that says to sign in
// (X-Auth-Required) returns the page to the instructions.
import { createApiClient } from "./api-client.js";
import { el, errorNotice, replaceChildren } from "./element.js";
import { signInView } from "./sign-in-view.js";
import { mountStatusHeader } from "./status-header.js";
import { appsSection } from "./apps-section.js";
import { devicesSection } from "./devices-section.js";
import { securityLogSection } from "./security-log-section.js";
import { inboxSection } from "./inbox-section.js";
import { settingsSection } from "./settings-section.js";
import { secretsSection } from "./secrets-section.js";
import { connectLiveEvents } from "./live-events.js";
import { pokeInstallProgress } from "./install-progress.js";

const main = document.getElementById("app");
const statusHost = document.getElementById("status");
const nav = document.getElementById("nav");

let statusHeader = null;
let liveEvents = null;
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
  document.title = "PersonalClaw";
  const refreshStatus = () => statusHeader?.refresh();
  const apps = appsSection(api, refreshStatus);
  const devices = devicesSection(api, showSignIn);
  const securityLog = securityLogSection(api);
  const inbox = inboxSection(api, document.getElementById("nav-inbox-count"));
  const settings = settingsSection(api);
  const secrets = secretsSection(api);
  replaceChildren(
    main,
    inbox.section,
    apps.section,
    devices.section,
    settings.section,
    secrets.section,
    securityLog.section,
  );
  await Promise.all([
    inbox.refresh(),
    apps.refresh(),
    devices.refresh(),
    settings.refresh(),
    secrets.refresh(),
    securityLog.refresh(),
  ]);
  inbox.start();
  if (view === "dashboard") startLiveEvents({ apps, devices, securityLog, inbox, refreshStatus });
}

/** Which sections a frame asks to re-read; each re-read is coalesced into one per 150 ms. */
function startLiveEvents(sections) {
  const pending = new Set();
  let timer = null;
  const refreshers = {
    // A live re-read keeps the notices on screen: the owner's own last answer stays readable.
    apps: () => sections.apps.refresh({ keepNotices: true }),
    status: () => sections.refreshStatus(),
    devices: () => sections.devices.refresh({ keepNotices: true }),
    securityLog: () => sections.securityLog.refresh(),
    inbox: () => sections.inbox.refresh({ keepNotices: true }),
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
    else if (frame.type.startsWith("approval.")) later("inbox");
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
