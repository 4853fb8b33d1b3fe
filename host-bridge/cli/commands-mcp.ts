// The `mcp` commands in the CLI's command table (commands.ts): where agents find the server
// map, the servers' state, running one for an agent, and letting a failed one start again.
import { defineCommand, jsonFlag, type CommandSpec } from "./command-table";
import { runMcpList, runMcpPath, runMcpRetry, runMcpRun } from "./mcp";

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
