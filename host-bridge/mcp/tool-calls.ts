// One tool call from the agent, in the order that keeps the owner's word: the definition the
// server offers now must be the pinned one, the tool's policy decides (an `ask` waits for the
// owner up to mcp.ask_timeout_s), only then does the call reach the server, bounded by
// mcp.call_timeout_s and mcp.max_answer_bytes; whatever the end, it is reported as evidence.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ErrorCode, McpError, type CallToolResult, type Progress } from "@modelcontextprotocol/sdk/types.js";
import {
  ARGUMENTS_SHOWN_CHARS,
  argumentsDigest,
  type CallOutcome,
  type ToolCallRecord,
  type ToolCallVerdict,
} from "../../kernel/contracts/mcp-tools";
import { errorMessage } from "../../kernel/contracts/errors";
import type { ErrorCode as GatewayCode } from "../../kernel/contracts/errors";
import { canonicalJson } from "../../kernel/crypto/canonical-json";
import { safeLine } from "../../kernel/text/text-safety";
import { REFUSED_BY_GATEWAY } from "./answer-cap";

/** The gateway's side of a call: the verdict, the owner's answer, the evidence. */
export interface ToolGate {
  decide(call: {
    tool: string;
    definitionDigest: string;
    argumentsDigest: string;
    argumentsShown: string;
  }): Promise<ToolCallVerdict>;
  /** Waits for the owner's answer to an approval until `timeoutMs` passes (then: expired). */
  awaitAnswer(approvalId: string, timeoutMs: number, signal: AbortSignal): Promise<"approved" | "denied" | "expired">;
  record(call: ToolCallRecord): void;
}

export interface CallBounds {
  callTimeoutMs: number;
  askTimeoutMs: number;
  maxAnswerBytes: number;
}

/** The arguments as an approval shows them: one safe line, credentials masked, cut to a bound. */
export function argumentsShown(args: unknown): string {
  const line = safeLine(canonicalJson(args ?? {}));
  return line.length > ARGUMENTS_SHOWN_CHARS ? `${line.slice(0, ARGUMENTS_SHOWN_CHARS)}… (cut)` : line;
}

/** The MCP error the agent gets for a refusal: the gateway's sentence, its stable code in `data.code`. */
export function refusal(code: GatewayCode, vars: Record<string, string | number>): McpError {
  return new McpError(REFUSED_BY_GATEWAY, errorMessage(code, vars), { code });
}

function gatewayCodeOf(error: unknown): string | null {
  if (!(error instanceof McpError)) return null;
  const data = error.data as { code?: unknown } | undefined;
  return typeof data?.code === "string" ? data.code : null;
}

/**
 * Runs one call through the gate to `client`. `definitionDigest` is the digest of what the
 * server offers now under that name (null: it offers no such tool). Resolves with the server's
 * result, or throws the MCP error the agent gets.
 */
export async function mediateCall(
  ctx: { key: string; app: string; client: Client; gate: ToolGate; bounds: CallBounds },
  call: { name: string; args: Record<string, unknown> | undefined; definitionDigest: string | null },
  signal: AbortSignal,
  onprogress?: (progress: Progress) => void,
): Promise<CallToolResult> {
  const started = Date.now();
  const digest = await argumentsDigest(call.args ?? {});
  const shown = argumentsShown(call.args);
  let approvalId: string | null = null;
  const vars = { tool: call.name.slice(0, 128), key: ctx.key, app: ctx.app };
  const end = (outcome: CallOutcome) =>
    ctx.gate.record({
      tool: call.name.slice(0, 128),
      argumentsDigest: digest,
      outcome,
      durationMs: Date.now() - started,
      approvalId,
      argumentsShown: shown,
    });
  if (call.definitionDigest === null) {
    end("withheld");
    throw refusal("mcp_tool_withheld", { ...vars, reason: "the server offers no such tool" });
  }
  const verdict = await ctx.gate.decide({
    tool: call.name,
    definitionDigest: call.definitionDigest,
    argumentsDigest: digest,
    argumentsShown: shown,
  });
  let allowedAs: "allowed" | "approved";
  if (verdict.decision === "refuse") {
    end(verdict.outcome);
    throw verdict.outcome === "withheld"
      ? refusal("mcp_tool_withheld", { ...vars, reason: verdict.reason })
      : refusal("mcp_tool_denied_by_policy", vars);
  } else if (verdict.decision === "ask") {
    approvalId = verdict.approvalId;
    const answer = await ctx.gate.awaitAnswer(verdict.approvalId, ctx.bounds.askTimeoutMs, signal);
    if (answer !== "approved") {
      end(answer);
      throw answer === "denied"
        ? refusal("mcp_tool_call_denied", vars)
        : refusal("mcp_tool_call_expired", { ...vars, seconds: Math.round(ctx.bounds.askTimeoutMs / 1000) });
    }
    allowedAs = "approved";
  } else allowedAs = verdict.outcome;
  try {
    const result = (await ctx.client.callTool({ name: call.name, arguments: call.args }, undefined, {
      timeout: ctx.bounds.callTimeoutMs,
      signal,
      // The call's bound stays the owner's: progress is passed on, never a reason to wait longer.
      ...(onprogress ? { onprogress } : {}),
    })) as CallToolResult;
    end(allowedAs);
    return result;
  } catch (error) {
    if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
      end("timed_out");
      throw refusal("mcp_tool_call_timed_out", { ...vars, seconds: Math.round(ctx.bounds.callTimeoutMs / 1000) });
    }
    if (gatewayCodeOf(error) === "mcp_tool_answer_too_large") {
      end("answer_too_large");
      throw refusal("mcp_tool_answer_too_large", { ...vars, limit: ctx.bounds.maxAnswerBytes });
    }
    end("server_error");
    throw error;
  }
}
