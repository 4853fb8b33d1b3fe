// The gateway's side of `mcp run`'s tool mediation (host-bridge/mcp/tool-mediator.ts): the
// listing reported and answered with each tool's state, the verdict asked before each call, the
// owner's answer waited for, each call's evidence sent. Every question goes to the gateway
// at the moment it is asked, so a policy or a pin the owner changes applies to the next call.
import { PassThrough } from "node:stream";
import { z } from "zod";
import { MCP_FIRST_START_MS, type McpLaunchAnswer } from "../../kernel/contracts/mcp";
import { safeLine } from "../../kernel/text/text-safety";
import type { OwnerConfig } from "../owner-config";
import { mediate } from "../mcp/tool-mediator";
import { packageVersion } from "./package-facts";
import { APPROVAL_STATES, MAX_WAIT_SECONDS } from "../../kernel/contracts/approvals";
import {
  ToolCallVerdictSchema,
  ToolViewSchema,
  type ToolCallRecord,
  type ToolDefinition,
} from "../../kernel/contracts/mcp-tools";
import type { MediatorGate } from "../mcp/tool-mediator";
import { callGateway, parseAnswer, type GatewayAnswer } from "./gateway-client";

function refused(answer: GatewayAnswer): Error {
  const error = answer.body?.error as { code?: string; message?: string } | undefined;
  return new Error(`${error?.code ?? `status ${answer.status}`}: ${error?.message ?? "unexpected answer"}`);
}

/** The gate of one run: its app, server, the install it serves and how long an `ask` waits. */
export function gatewayToolGate(
  home: string,
  run: { app: string; server: string; consentDigest: string; askTimeoutSeconds: number },
): MediatorGate & { flush: () => Promise<void> } {
  const work = `mcp:${run.app}:${run.server}`;
  const base = `/api/internal/mcp/${run.app}/${run.server}`;
  const records = new Set<Promise<unknown>>();
  return {
    async report(tools: ToolDefinition[]) {
      const answer = await callGateway(home, work, "POST", `${base}/tools`, {
        consentDigest: run.consentDigest,
        tools,
      });
      const parsed = parseAnswer(answer, z.object({ tools: z.array(ToolViewSchema) }));
      if (!parsed.ok) throw refused(parsed.answer);
      return parsed.body.tools;
    },
    async decide(call) {
      const answer = await callGateway(home, work, "POST", `${base}/calls`, {
        consentDigest: run.consentDigest,
        askTimeoutSeconds: run.askTimeoutSeconds,
        ...call,
      });
      const parsed = parseAnswer(answer, ToolCallVerdictSchema);
      // A gateway that cannot say yes is a no: the call is withheld, never passed on unchecked.
      if (!parsed.ok)
        return {
          decision: "refuse",
          outcome: "withheld",
          reason: `the gateway did not answer (${refused(parsed.answer).message})`,
        };
      return parsed.body;
    },
    async awaitAnswer(approvalId, timeoutMs, signal) {
      const deadline = Date.now() + timeoutMs;
      while (!signal.aborted) {
        const left = Math.ceil((deadline - Date.now()) / 1000);
        if (left <= 0) return "expired";
        const wait = Math.min(left, MAX_WAIT_SECONDS);
        const answer = await callGateway(home, work, "GET", `${base}/calls/${approvalId}?wait=${wait}`).catch(
          () => null,
        );
        const parsed = answer ? parseAnswer(answer, z.object({ state: z.enum(APPROVAL_STATES) })) : null;
        if (parsed?.ok) {
          const state = parsed.body.state;
          if (state === "approved" || state === "denied" || state === "expired") return state;
        } else await new Promise((r) => setTimeout(r, 1000));
      }
      return "expired";
    },
    record(call: ToolCallRecord) {
      const sent = callGateway(home, work, "POST", `${base}/calls/record`, call)
        .then((answer) => {
          if (answer.status !== 200)
            process.stderr.write(`personalclaw: a tool call was not recorded: ${refused(answer).message}\n`);
        })
        .catch((error) => process.stderr.write(`personalclaw: a tool call was not recorded: ${String(error)}\n`))
        .finally(() => records.delete(sent));
      records.add(sent);
    },
    async flush() {
      await Promise.all([...records]);
    },
  };
}

/**
 * The agent's stdio, mediated (issue 39): the SDK's server towards the agent, its client
 * towards the streams the confined server's stdio is relayed through. `end` closes both sides
 * and waits until every call's evidence has been sent.
 */
export function mediatedStdio(home: string, app: string, server: string, launch: McpLaunchAnswer, config: OwnerConfig) {
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
    },
  };
}
