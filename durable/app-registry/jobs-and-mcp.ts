// What AppRegistry answers about MCP server launches, and how many fires of a job it keeps
// (the job views themselves cross to the CLI, so their schema is a contract).
import type { ErrorCode } from "../../kernel/contracts/errors";
import type { McpLaunchAnswer } from "../../kernel/contracts/mcp";

/** Each job keeps its last 50 fires. */
export const JOB_RUNS_KEPT = 50;

export type McpLaunchVerdict =
  { ok: true; answer: McpLaunchAnswer } | { ok: false; code: ErrorCode; vars: Record<string, string | number> };
