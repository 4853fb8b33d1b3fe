// The owner's settings for tool calls through `mcp run` (issue 39): how long a call whose policy
// is ask waits for the owner, how long a server has to answer, and the largest answer it may
// give. Part of OWNER_SETTINGS (owner-settings.ts); each `mcp run` reads them when it starts.
import type { SettingSpec } from "./owner-settings";
/** mcp.*: how long an `ask` call waits for the owner, a call for its server, and the largest answer (issue 39). */
export const MCP_ASK_TIMEOUT_RANGE_S = { min: 5, max: 3600, default: 120 } as const;
export const MCP_CALL_TIMEOUT_RANGE_S = { min: 1, max: 3600, default: 60 } as const;
export const MCP_MAX_ANSWER_RANGE_BYTES = { min: 65_536, max: 256 * 1024 * 1024, default: 8 * 1024 * 1024 } as const;

const never = () => false;

export const MCP_SETTINGS: readonly SettingSpec[] = [
  {
    path: "mcp.ask_timeout_s",
    type: "integer",
    unit: "seconds",
    default: MCP_ASK_TIMEOUT_RANGE_S.default,
    min: MCP_ASK_TIMEOUT_RANGE_S.min,
    max: MCP_ASK_TIMEOUT_RANGE_S.max,
    meaning:
      "How long a call to an MCP tool whose policy is ask waits for your answer in the Inbox; then it fails and is logged as expired. Read by each `mcp run` when it starts.",
    security: false,
    loosens: never,
    consent: "mcp_ask_timeout",
    title: "Change how long tool calls wait for you",
    applies: "next_start",
  },
  {
    path: "mcp.call_timeout_s",
    type: "integer",
    unit: "seconds",
    default: MCP_CALL_TIMEOUT_RANGE_S.default,
    min: MCP_CALL_TIMEOUT_RANGE_S.min,
    max: MCP_CALL_TIMEOUT_RANGE_S.max,
    meaning:
      "How long an app's MCP server has to answer one tool call; then the call is cancelled and fails. Read by each `mcp run` when it starts.",
    security: false,
    loosens: never,
    consent: "mcp_call_timeout",
    title: "Change how long tool calls may take",
    applies: "next_start",
  },
  {
    path: "mcp.max_answer_bytes",
    type: "integer",
    default: MCP_MAX_ANSWER_RANGE_BYTES.default,
    min: MCP_MAX_ANSWER_RANGE_BYTES.min,
    max: MCP_MAX_ANSWER_RANGE_BYTES.max,
    meaning:
      "The largest message, in bytes, an app's MCP server may send the agent; a larger answer is dropped and its call fails. Read by each `mcp run` when it starts.",
    security: false,
    loosens: never,
    consent: "mcp_max_answer",
    title: "Change the largest answer a tool may give",
    applies: "next_start",
  },
];
