// The status header: version, auth mode, uptime and app counts from GET /api/status.
import { el, errorNotice, replaceChildren } from "./element.js";
import { formatDuration } from "./format.js";

const REFRESH_MS = 30_000;

function fact(label, value, key) {
  return el("div", { class: "fact", "data-fact": key }, el("dt", { text: label }), el("dd", { text: value }));
}

function countText(value) {
  return typeof value === "number" ? String(value) : "unknown";
}

/** Mounts the status facts into `host` and keeps them fresh; returns a refresh function. */
export function mountStatusHeader(host, api) {
  let fetchedAt = 0;
  let uptimeAtFetch = null;
  let uptimeNode = null;

  function tickUptime() {
    if (uptimeNode === null || uptimeAtFetch === null) return;
    uptimeNode.textContent = formatDuration(uptimeAtFetch + Math.floor((Date.now() - fetchedAt) / 1000));
  }

  async function refresh() {
    const answer = await api.get("/api/status");
    if (!answer.ok) {
      if (!answer.isAuthRequired) replaceChildren(host, errorNotice(answer));
      return answer;
    }
    const status = answer.data;
    const apps = status.apps && typeof status.apps === "object" ? status.apps : {};
    fetchedAt = Date.now();
    uptimeAtFetch = typeof status.uptime_s === "number" ? status.uptime_s : null;
    const uptime = fact("Uptime", formatDuration(uptimeAtFetch ?? NaN), "uptime");
    uptimeNode = uptime.querySelector("dd");
    replaceChildren(
      host,
      el(
        "dl",
        { class: "facts" },
        fact("Version", status.version ?? "unknown", "version"),
        fact("Auth mode", status.auth_mode ?? "unknown", "auth-mode"),
        uptime,
        fact("Apps installed", countText(apps.installed), "apps-installed"),
        fact("Apps running", countText(apps.running), "apps-running"),
      ),
    );
    return answer;
  }

  const ticker = setInterval(tickUptime, 1000);
  const refresher = setInterval(refresh, REFRESH_MS);
  return {
    refresh,
    stop() {
      clearInterval(ticker);
      clearInterval(refresher);
    },
  };
}
