// An app's MCP tools on its page (issue 39): each server's tools as pinned at consent, with
// their state (pinned; new, changed or removed and waiting in the Inbox; a name conflict) and
// the owner's allow / ask / deny switch of each and whether its argument values are logged, and
// the app's recent tool calls (a digest of their arguments; the values only for a tool whose
// values are logged). A switch applies to the agent's next call. Loosening a switch (to ask
// from deny, or to allow) or turning the logging of values on needs a recent sign-in, as other
// loosenings do.
import { el, errorNotice, infoNotice, listOf, replaceChildren, timeElement } from "./element.js";

const POLICIES = ["allow", "ask", "deny"];
const STATE_TEXT = {
  pinned: "pinned",
  new: "new — withheld until you approve it in the Inbox",
  changed: "changed — withheld until you approve the change in the Inbox",
  removed: "removed — approve in the Inbox to unpin it",
  conflict: "name conflict — withheld",
};

/** The Tools part of the app page of `appName`; answers {section, refresh}. */
export function mcpToolsPart(api, appName) {
  const base = `/api/mcp/${encodeURIComponent(appName)}`;
  const notices = el("div", { class: "notices", "aria-live": "polite" });
  const servers = el("div", {}, el("p", { class: "muted", text: "Loading…" }));
  const calls = el("div", {});
  const section = el(
    "section",
    { class: "detail-part", "aria-labelledby": "app-tools-title", id: "app-tools" },
    el("h3", { id: "app-tools-title", text: "Tools the agent may call" }),
    notices,
    servers,
    el("h4", { id: "app-tool-calls-title", text: "Recent tool calls" }),
    calls,
  );
  section.hidden = true;

  /** Sends one switch of a tool (`policy` or `arguments-log`) and says what changed, or why not. */
  async function setSwitch(server, tool, which, body, done) {
    const path = `${base}/${encodeURIComponent(server)}/tools/${encodeURIComponent(tool)}/${which}`;
    const answer = await api.post(path, body);
    if (!answer.ok) {
      if (!answer.isAuthRequired) replaceChildren(notices, errorNotice(answer));
      await refresh();
      return;
    }
    replaceChildren(notices, infoNotice(`${tool} of ${appName}:${server}: ${done}, from the next call on.`));
    await refresh();
  }
  const switches = {
    setPolicy: (server, tool, policy) => setSwitch(server, tool, "policy", { policy }, `now ${policy}`),
    setLogged: (server, tool, log) =>
      setSwitch(
        server,
        tool,
        "arguments-log",
        { log },
        log ? "argument values are logged" : "only a digest of the arguments is logged",
      ),
  };

  async function refresh() {
    const [tools, recent] = await Promise.all([api.get(`${base}/tools`), api.get(`${base}/calls`)]);
    if (!tools.ok) {
      if (!tools.isAuthRequired) replaceChildren(servers, errorNotice(tools));
      return;
    }
    const list = listOf(tools.data.servers);
    section.hidden = list.length === 0;
    replaceChildren(
      servers,
      list.map((server) => serverPart(appName, server, switches)),
    );
    const recentCalls = recent.ok ? listOf(recent.data.calls) : [];
    replaceChildren(
      calls,
      recentCalls.length === 0
        ? el("p", { class: "muted", text: "No tool calls yet." })
        : el(
            "ul",
            { class: "tool-calls", "aria-labelledby": "app-tool-calls-title" },
            recentCalls.slice(0, 20).map(callItem),
          ),
    );
  }

  return { section, refresh };
}

/** One tool's allow / ask / deny switch; choosing one sets it at once. */
function policySwitch(server, tool, { setPolicy }) {
  const name = `tool-policy-${server}-${tool.name}`;
  return el(
    "fieldset",
    { class: "policy-switch", "data-tool": tool.name },
    el("legend", { class: "visually-hidden", text: `Policy of ${tool.name}` }),
    POLICIES.map((policy) => {
      const id = `${name}-${policy}`;
      const input = el("input", {
        id,
        type: "radio",
        name,
        value: policy,
        onChange: () => void setPolicy(server, tool.name, policy),
      });
      input.checked = tool.policy === policy;
      return el("span", {}, input, el("label", { for: id, text: policy }));
    }),
  );
}

/** Whether a tool's calls keep their argument values in the log; off by default. */
function loggedSwitch(server, tool, { setLogged }) {
  const id = `tool-log-${server}-${tool.name}`;
  const input = el("input", {
    id,
    type: "checkbox",
    onChange: () => void setLogged(server, tool.name, input.checked),
  });
  input.checked = tool.logArguments === true;
  return el("span", { class: "log-switch" }, input, el("label", { for: id, text: "log argument values" }));
}

function toolRow(server, tool, switches) {
  const definition = tool.pinned ?? tool.offered;
  return el(
    "tr",
    { "data-tool": tool.name, "data-state": tool.state },
    el("td", {}, el("code", { text: tool.name })),
    el("td", {
      text: tool.conflictWith
        ? `${STATE_TEXT.conflict} (${tool.conflictWith === "platform" ? "kept for the platform" : `${tool.conflictWith} has it`})`
        : STATE_TEXT[tool.state],
    }),
    el("td", { class: "wrap", text: definition?.description ?? "" }),
    el(
      "td",
      {},
      tool.pinned ? policySwitch(server, tool, switches) : el("span", { class: "muted", text: tool.policy }),
      el("span", { class: "muted", text: tool.policySetBy === "owner" ? " (set by you)" : " (default)" }),
      tool.pinned ? loggedSwitch(server, tool, switches) : null,
    ),
  );
}

function serverPart(appName, server, switches) {
  const tools = listOf(server.tools);
  return el(
    "div",
    { "data-server": server.server },
    el("p", {}, el("code", { text: `${appName}:${server.server}` })),
    server.consentDigest === null
      ? el("p", { class: "muted", text: "Not pinned yet: its tools are pinned the first time an agent starts it." })
      : el(
          "table",
          { class: "tool-table" },
          el(
            "thead",
            {},
            el(
              "tr",
              {},
              ["Tool", "State", "Description", "Policy"].map((t) => el("th", { scope: "col", text: t })),
            ),
          ),
          el(
            "tbody",
            {},
            tools.map((tool) => toolRow(server.server, tool, switches)),
          ),
        ),
  );
}

function callItem(call) {
  return el(
    "li",
    { "data-outcome": call.outcome },
    timeElement(call.at),
    " ",
    el("code", { text: `${call.server} ${call.tool}` }),
    ` ${call.outcome}, ${call.durationMs} ms, arguments `,
    typeof call.arguments === "string"
      ? el("code", { class: "mono wrap", text: call.arguments })
      : el("code", { class: "mono", text: String(call.argumentsDigest).slice(0, 19) }),
  );
}
