// An app's extensions of the agent, on its row in Apps: the MCP servers it registers (state,
// last start, Retry after three failed starts) and its scheduled jobs (schedule, next fire,
// the fires kept). Text only: every value reaches the page as a text node (element.js).
import { el, errorNotice, listOf, replaceChildren } from "./element.js";

const STATE_WORDS = {
  registered: "registered",
  off: "turned off",
  failing: "failed 3 starts in a row; waits for Retry",
  starting: "still starting (a first start may take up to 10 minutes)",
  app_disabled: "app disabled: not in mcp.json",
};

function lastStartText(start) {
  if (!start || typeof start !== "object") return "never started";
  if (start.ok) return `last start ${start.at}: answered`;
  return `last start ${start.at}: exited ${start.exitCode ?? "-"} before answering${start.reason ? ` — ${start.reason}` : ""}`;
}

/** The MCP servers part of an app's row; `rows` are this app's rows of GET /api/mcp. `changed()` refreshes Apps. */
export function mcpServersPart(api, rows, changed) {
  const servers = listOf(rows);
  if (servers.length === 0) return null;
  const notices = el("div", { class: "notices", "aria-live": "polite" });
  async function act(server, path, body) {
    const answer = await api.post(
      `/api/mcp/${encodeURIComponent(server.app)}/${encodeURIComponent(server.server)}/${path}`,
      body,
    );
    if (!answer.ok) {
      if (!answer.isAuthRequired) replaceChildren(notices, errorNotice(answer));
      return;
    }
    await changed();
  }
  return el(
    "div",
    { class: "app-mcp" },
    el("h4", { text: "MCP servers" }),
    el(
      "ul",
      {},
      servers.map((s) =>
        el(
          "li",
          { "data-mcp": s.key },
          el("strong", { text: String(s.key) }),
          ` (${s.transport}) — ${STATE_WORDS[s.state] ?? String(s.state)} · ${lastStartText(s.lastStart)}`,
          s.state === "failing"
            ? el("button", {
                type: "button",
                text: "Retry",
                "aria-label": `Retry ${s.key}`,
                onClick: () => act(s, "retry", {}),
              })
            : null,
          s.state === "registered" || s.state === "off" || s.state === "failing"
            ? el("button", {
                type: "button",
                text: s.ownerEnabled ? "Turn off" : "Turn on",
                "aria-label": `${s.ownerEnabled ? "Turn off" : "Turn on"} ${s.key}`,
                onClick: () => act(s, "toggle", { enabled: !s.ownerEnabled }),
              })
            : null,
        ),
      ),
    ),
    notices,
  );
}

/** The scheduled jobs part of an app's row: loaded when the owner opens it. */
export function jobsPart(api, appName) {
  const body = el("div", {}, el("p", { class: "muted", text: "Loading jobs…" }));
  let loaded = false;
  async function load() {
    const answer = await api.get(`/api/apps/${encodeURIComponent(appName)}/jobs`);
    if (!answer.ok) {
      if (!answer.isAuthRequired) replaceChildren(body, errorNotice(answer));
      return;
    }
    const jobs = listOf(answer.data.jobs);
    replaceChildren(
      body,
      jobs.length === 0
        ? el("p", { class: "muted", text: "No scheduled jobs." })
        : el(
            "ul",
            {},
            jobs.map((job) =>
              el(
                "li",
                { "data-job": job.name },
                el("strong", { text: String(job.name) }),
                ` ${job.schedule} (${job.timezone}) → POST ${job.route} · next fire: ${job.nextFire ?? (job.paused ? "none while the app is disabled" : "none")}`,
                listOf(job.history).length === 0
                  ? el("p", { class: "muted", text: "Not fired yet." })
                  : el(
                      "ul",
                      { class: "job-history" },
                      listOf(job.history).map((run) =>
                        el("li", {
                          text: `${run.startedAt} ${run.outcome}${run.status !== null ? ` ${run.status}` : ""} in ${run.durationMs} ms${run.error ? ` — ${run.error}` : ""}`,
                        }),
                      ),
                    ),
              ),
            ),
          ),
    );
  }
  return el(
    "details",
    {
      class: "app-jobs",
      onToggle: (event) => {
        if (event.target.open && !loaded) {
          loaded = true;
          load();
        }
      },
    },
    el("summary", { text: "Scheduled jobs" }),
    body,
  );
}
