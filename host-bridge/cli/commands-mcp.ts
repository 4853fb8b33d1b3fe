// The `mcp` commands in the CLI's command table (commands.ts): where agents find the server
// map, the servers' state, running one for an agent, and letting a failed one start again;
// each server's pinned tools, the owner's policy of one tool and whether its argument values are logged.
import { defineCommand, jsonFlag, type CommandSpec } from "./command-table";
import { runMcpList, runMcpPath, runMcpRetry, runMcpRun } from "./mcp";
import { runMcpLogArguments, runMcpPolicy, runMcpTools } from "./mcp-tools";

/** The mcp commands, in the order help lists them. */
export const MCP_COMMANDS: readonly CommandSpec[] = [
  defineCommand({
    words: ["mcp", "path"],
    summary: "Print where the MCP server map agents read (mcp.json) is.",
    args: [],
    flags: { json: jsonFlag },
    reads: true,
    run: ({ flags }, { home }) => runMcpPath(home, flags),
  }),
  defineCommand({
    words: ["mcp", "list"],
    summary: "The apps' MCP servers: state and last start.",
    args: [],
    flags: { json: jsonFlag },
    reads: true,
    run: ({ flags }, { home }) => runMcpList(home, flags),
  }),
  defineCommand({
    words: ["mcp", "run"],
    summary: "Start an app's MCP server in its sandbox and speak MCP on stdin and stdout.",
    args: [
      { name: "app", help: "the installed app" },
      { name: "server", help: "a server the app declares" },
    ],
    flags: {},
    reads: false,
    run: ({ args }, { home }) => runMcpRun(home, args[0], args[1]),
  }),
  defineCommand({
    words: ["mcp", "tools"],
    summary: "An app's MCP tools as pinned at consent: each one's policy (allow, ask, deny) and state.",
    args: [{ name: "app", help: "the installed app" }],
    flags: { json: jsonFlag },
    reads: true,
    run: ({ flags, args }, { home }) => runMcpTools(home, args[0], flags),
  }),
  defineCommand({
    words: ["mcp", "policy"],
    summary: "Set one MCP tool's policy: allow, ask (each call waits for you) or deny; from the next call on.",
    args: [
      { name: "app", help: "the installed app" },
      { name: "server", help: "a server the app declares" },
      { name: "tool", help: "a pinned tool of the server" },
      { name: "policy", help: "allow, ask or deny" },
    ],
    flags: { json: jsonFlag },
    reads: false,
    run: ({ flags, args }, { home }) =>
      runMcpPolicy(home, { app: args[0], server: args[1], tool: args[2], policy: args[3] }, flags),
  }),
  defineCommand({
    words: ["mcp", "log-arguments"],
    summary:
      "Keep one MCP tool's argument values in the security log (on) or only their digest (off, the default); from the next call on.",
    args: [
      { name: "app", help: "the installed app" },
      { name: "server", help: "a server the app declares" },
      { name: "tool", help: "a pinned tool of the server" },
      { name: "state", help: "on or off" },
    ],
    flags: { json: jsonFlag },
    reads: false,
    run: ({ flags, args }, { home }) =>
      runMcpLogArguments(home, { app: args[0], server: args[1], tool: args[2], state: args[3] }, flags),
  }),
  defineCommand({
    words: ["mcp", "retry"],
    summary: "Let a server start again after 3 failed starts.",
    args: [
      { name: "app", help: "the installed app" },
      { name: "server", help: "a server the app declares" },
    ],
    flags: { json: jsonFlag },
    reads: false,
    run: ({ flags, args }, { home }) => runMcpRetry(home, args[0], args[1], flags),
  }),
];
