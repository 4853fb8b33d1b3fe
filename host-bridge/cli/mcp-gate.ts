// The gateway's side of `mcp run`'s tool mediation (host-bridge/mcp/tool-mediator.ts): the
// listing reported and answered with each tool's state, the verdict asked before each call, the
// owner's answer waited for, each call's evidence sent. A verdict is asked at the moment of the
// call, except an `allow` by policy, kept while the tool stamp (host-bridge/mcp/tool-stamp.ts)
// holds the value read before it was asked: the AppRegistry rewrites the stamp before it
// answers any change a verdict reads, so a policy or a pin the owner changes still applies to
// the next call. Evidence goes in order, one report at a time, carrying every call that ended
// while the previous report was on its way.
import { Agent } from "node:http";
import { PassThrough } from "node:stream";
import { z } from "zod";
import { MCP_FIRST_START_MS, type McpLaunchAnswer } from "../../kernel/contracts/mcp";
import { safeLine } from "../../kernel/text/text-safety";
import type { OwnerConfig } from "../owner-config";
import { packageVersion } from "./package-facts";
import { APPROVAL_STATES, MAX_WAIT_SECONDS } from "../../kernel/contracts/approvals";
import {
  MAX_CALLS_PER_REPORT,
  TOOL_VERDICT_KEPT_MS,
  ToolCallVerdictSchema,
  ToolViewSchema,
  type ToolCallRecord,
  type ToolDefinition,
} from "../../kernel/contracts/mcp-tools";
import { homePaths } from "../home";
import { readToolStamp } from "../mcp/tool-stamp";
import type { MediatorGate } from "../mcp/tool-mediator";
import { callGateway, parseAnswer, type GatewayAnswer } from "./gateway-client";

function refused(answer: GatewayAnswer): Error {
  const error = answer.body?.error as { code?: string; message?: string } | undefined;
  return new Error(`${error?.code ?? `status ${answer.status}`}: ${error?.message ?? "unexpected answer"}`);
}

/** An `allow` by policy kept for one tool: good while the stamp and the definition are the ones it was asked under. */
interface KeptAllow {
  definitionDigest: string;
  stamp: string;
  until: number;
}

/** The gate of one run: its app, server, the install it serves and how long an `ask` waits. */
export function gatewayToolGate(
  home: string,
  run: { app: string; server: string; consentDigest: string; askTimeoutSeconds: number },
): MediatorGate & { flush: () => Promise<void>; close: () => void } {
  const work = `mcp:${run.app}:${run.server}`;
  const base = `/api/internal/mcp/${run.app}/${run.server}`;
  const stampDir = homePaths(home).toolStamp;
  // Kept connections idle at most 2 s: workerd closes an idle one after 5 s, and a request sent
  // on a connection closing under it would fail (a call withheld) where a fresh one would not.
  const agent = new Agent({ keepAlive: true, maxSockets: 4, timeout: 2000 });
  const call = (method: string, path: string, body?: unknown) => callGateway(home, work, method, path, body, { agent });
  const kept = new Map<string, KeptAllow>();
  const pending: ToolCallRecord[] = [];
  let reporting: Promise<void> | null = null;

  const report = async () => {
    while (pending.length > 0) {
      const calls = pending.splice(0, MAX_CALLS_PER_REPORT);
      const lost = (why: string) =>
        process.stderr.write(`personalclaw: ${calls.length} tool call(s) were not recorded: ${why}\n`);
      try {
        const answer = await call("POST", `${base}/calls/record`, { calls });
        if (answer.status !== 200) lost(refused(answer).message);
      } catch (error) {
        lost(String(error));
      }
    }
    reporting = null;
  };

  return {
    async report(tools: ToolDefinition[]) {
      const answer = await call("POST", `${base}/tools`, { consentDigest: run.consentDigest, tools });
      const parsed = parseAnswer(answer, z.object({ tools: z.array(ToolViewSchema) }));
      if (!parsed.ok) throw refused(parsed.answer);
      return parsed.body.tools;
    },
    async decide(asked) {
      // Read before asking: a change the gateway answers after this read rewrites the stamp.
      const stamp = readToolStamp(stampDir);
      const allow = kept.get(asked.tool);
      if (
        allow !== undefined &&
        stamp === allow.stamp &&
        asked.definitionDigest === allow.definitionDigest &&
        performance.now() < allow.until
      )
        return { decision: "allow", outcome: "allowed" };
      kept.delete(asked.tool);
      // On the monotonic clock: setting the wall clock back must not stretch a kept allow.
      const until = performance.now() + TOOL_VERDICT_KEPT_MS;
      const answer = await call("POST", `${base}/calls`, {
        consentDigest: run.consentDigest,
        askTimeoutSeconds: run.askTimeoutSeconds,
        ...asked,
      });
      const parsed = parseAnswer(answer, ToolCallVerdictSchema);
      // A gateway that cannot say yes is a no: the call is withheld, never passed on unchecked.
      if (!parsed.ok)
        return {
          decision: "refuse",
          outcome: "withheld",
          reason: `the gateway did not answer (${refused(parsed.answer).message})`,
        };
      // Only the policy's own allow is kept: a grant's can be taken back without a stamp.
      if (stamp !== null && parsed.body.decision === "allow" && parsed.body.outcome === "allowed")
        kept.set(asked.tool, { definitionDigest: asked.definitionDigest, stamp, until });
      return parsed.body;
    },
    async awaitAnswer(approvalId, timeoutMs, signal) {
      const deadline = Date.now() + timeoutMs;
      while (!signal.aborted) {
        const left = Math.ceil((deadline - Date.now()) / 1000);
        if (left <= 0) return "expired";
        const wait = Math.min(left, MAX_WAIT_SECONDS);
        const answer = await call("GET", `${base}/calls/${approvalId}?wait=${wait}`).catch(() => null);
        const parsed = answer ? parseAnswer(answer, z.object({ state: z.enum(APPROVAL_STATES) })) : null;
        if (parsed?.ok) {
          const state = parsed.body.state;
          if (state === "approved" || state === "denied" || state === "expired") return state;
        } else await new Promise((r) => setTimeout(r, 1000));
      }
      return "expired";
    },
    record(ended: ToolCallRecord) {
      pending.push(ended);
      reporting ??= report();
    },
    async flush() {
      while (reporting !== null) await reporting;
    },
    close() {
      agent.destroy();
    },
  };
}

/**
 * The agent's stdio, mediated (issue 39): the SDK's server towards the agent, its client
 * towards the streams the confined server's stdio is relayed through. `end` closes both sides
 * and waits until every call's evidence has been sent.
 */
export async function mediatedStdio(
  home: string,
  app: string,
  server: string,
  launch: McpLaunchAnswer,
  config: OwnerConfig,
) {
  // Loaded by `mcp run` alone: the MCP SDK (with ajv) is compiled by no other command.
  const { mediate } = await import("../mcp/tool-mediator");
  const toChild = new PassThrough();
  const fromChild = new PassThrough();
  const gate = gatewayToolGate(home, {
    app,
    server,
    consentDigest: launch.consentDigest,
    askTimeoutSeconds: config.mcp.ask_timeout_s,
  });
  const mediation = mediate({
    app,
    server,
    version: packageVersion(),
    agent: { stdin: process.stdin, stdout: process.stdout },
    child: { stdout: fromChild, stdin: toChild },
    gate,
    bounds: {
      askTimeoutMs: config.mcp.ask_timeout_s * 1000,
      callTimeoutMs: config.mcp.call_timeout_s * 1000,
      maxAnswerBytes: config.mcp.max_answer_bytes,
    },
    firstAnswerMs: MCP_FIRST_START_MS,
    log: (line) => process.stderr.write(`${line}\n`),
  });
  mediation.ready.catch((error) =>
    process.stderr.write(`personalclaw: ${app}:${server}: ${safeLine(String(error))}\n`),
  );
  return {
    toChild,
    fromChild,
    end: async () => {
      await mediation.close();
      await gate.flush();
      gate.close();
    },
  };
}
