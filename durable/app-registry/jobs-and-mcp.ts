// What AppRegistry answers about an app's scheduled jobs and MCP server launches. Inside one
// isolate, TypeScript types are enough; the HTTP answers built from them are the routes'.
import type { ErrorCode } from "../../workers/contracts/errors";
import type { McpLaunchAnswer } from "../../workers/contracts/mcp";

/** Each job keeps its last 50 fires. */
export const JOB_RUNS_KEPT = 50;

export interface JobRun {
  scheduledFor: string;
  startedAt: string;
  /** ok: the route answered 2xx; failed: any other answer, a timeout or no backend; skipped: the app was held. */
  outcome: "ok" | "failed" | "skipped";
  status: number | null;
  durationMs: number;
  error: string | null;
}

export interface JobView {
  name: string;
  schedule: string;
  timezone: string;
  route: string;
  timeoutSeconds: number;
  /** Null while the app is disabled (a disabled app's jobs never fire). */
  nextFire: string | null;
  paused: boolean;
  history: JobRun[];
}

export type McpLaunchVerdict =
  { ok: true; answer: McpLaunchAnswer } | { ok: false; code: ErrorCode; vars: Record<string, string | number> };
