// What the gateway does for `mcp run` about tools (issue 39): asks the owner about every change
// of a pinned definition (an approval showing the old and the new text), applies the ones the
// owner approved, decides each call under the tool's pin and policy (an `ask` raises an
// approval a live grant may answer at once), and keeps each call's evidence.
import type { Env } from "../durable/env";
import { appRegistry, approvalStore } from "../durable/instances";
import { audit } from "../durable/security-log/audit";
import { emitEvent } from "../durable/event-hub/emit";
import { canonicalJson } from "../kernel/crypto/canonical-json";
import { sha256Hex } from "../kernel/crypto/hex";
import { mcpKey } from "../kernel/contracts/mcp";
import type { ApprovalAction, ApprovalScope, ApprovalView } from "../kernel/contracts/approvals";
import {
  REFUSED_OUTCOMES,
  TOOL_DEFINITION_KIND,
  toolAsker,
  toolCallKind,
  type ToolCallRecord,
  type ToolCallVerdict,
  type ToolDefinition,
} from "../kernel/contracts/mcp-tools";
import { safeLines } from "../kernel/text/text-safety";
import type { ToolChange } from "../durable/app-registry/tool-pins";

/** How long a question about a changed definition waits for the owner. */
const DEFINITION_APPROVAL_TTL_MS = 7 * 86_400_000;
const CHANGE_TEXT_CHARS = 4000;

async function digestOf(value: unknown): Promise<string> {
  return `sha256:${await sha256Hex(new TextEncoder().encode(canonicalJson(value)))}`;
}

/** A definition as the owner reads it in the Inbox: each part on its lines, third-party text made safe. */
export function definitionText(tool: ToolDefinition | null): string {
  if (tool === null) return "(no such tool)";
  const lines = [
    `name: ${tool.name}`,
    ...(tool.title !== undefined ? [`title: ${tool.title}`] : []),
    `description: ${tool.description ?? "(none)"}`,
    `input schema: ${canonicalJson(tool.inputSchema)}`,
    ...(tool.outputSchema !== undefined ? [`output schema: ${canonicalJson(tool.outputSchema)}`] : []),
    ...(tool.annotations !== undefined ? [`annotations: ${canonicalJson(tool.annotations)}`] : []),
  ];
  const text = safeLines(lines.join("\n"));
  return text.length > CHANGE_TEXT_CHARS ? `${text.slice(0, CHANGE_TEXT_CHARS - 1)}…` : text;
}

/** Raises an approval as the gateway's own asker and writes what the approvals route writes for one. */
async function raiseApproval(
  env: Env,
  input: { askedBy: string; app: string; kind: string; title: string; action: ApprovalAction },
  scopes: ApprovalScope[],
  ttlMs: number,
  now: number,
): Promise<{ approval: ApprovalView; byGrant: boolean }> {
  const raised = await approvalStore(env).raise({ ...input, scopes, ttlMs }, now);
  const approval = raised.approval as ApprovalView;
  if (raised.grant) {
    await audit(env, {
      kind: "approval.answered",
      outcome: "allowed",
      principal: input.askedBy,
      subject: approval.id,
      detail: {
        decision: "approved",
        by: "grant",
        grant_id: raised.grant.id,
        scope: raised.grant.scope,
        kind: input.kind,
      },
    });
    await emitEvent(env, "approval.answered", {
      id: approval.id,
      asked_by: approval.asked_by,
      kind: approval.kind,
      decision: "approved",
    });
    return { approval, byGrant: true };
  }
  await audit(env, {
    kind: "approval.raised",
    outcome: "info",
    principal: input.askedBy,
    subject: approval.id,
    detail: { asked_by: approval.asked_by, kind: approval.kind, scopes: approval.scopes },
  });
  await emitEvent(env, "approval.raised", { id: approval.id, asked_by: approval.asked_by, kind: approval.kind });
  return { approval, byGrant: false };
}

const CHANGE_TITLES: Record<ToolChange["change"], string> = {
  new: "offers a new tool",
  changed: "changed the definition of its tool",
  removed: "no longer offers its tool",
};

async function askAboutChange(env: Env, app: string, server: string, change: ToolChange, now: number) {
  const key = mcpKey(app, server);
  const { approval } = await raiseApproval(
    env,
    {
      askedBy: toolAsker(app, server),
      app,
      kind: TOOL_DEFINITION_KIND,
      title: `${key} ${CHANGE_TITLES[change.change]} ${change.tool}`.slice(0, 200),
      action: {
        route: `mcp ${key}`,
        target: change.tool,
        arguments_digest: change.after === null ? await digestOf({ removed: change.tool }) : change.proposedDigest,
        summary:
          change.change === "removed"
            ? "Approve to unpin it; until then the agent does not see it."
            : "Until you approve, the agent does not see this tool and a call to it fails without reaching the server.",
        widens_reach: change.change !== "removed",
        change: { before: definitionText(change.before), after: definitionText(change.after) },
      },
    },
    ["once"],
    DEFINITION_APPROVAL_TTL_MS,
    now,
  );
  await appRegistry(env).toolChangeAsked(app, server, change.tool, change.proposedDigest, approval.id);
}

/**
 * Brings a server's changes up to date with the owner's answers: an approved change becomes the
 * pin; with `ask`, one without a live question gets one (raised again once an earlier one
 * expired). A denied one stays withheld until the server offers something else.
 */
export async function settleToolChanges(
  env: Env,
  app: string,
  server: string,
  now: number,
  ask: boolean,
): Promise<void> {
  const registry = appRegistry(env);
  for (const change of (await registry.toolChanges(app, server)) as ToolChange[]) {
    if (change.approvalId !== null) {
      const approval = (await approvalStore(env).get(change.approvalId, now)) as ApprovalView | null;
      if (approval?.state === "approved") {
        await registry.toolChangeApproved(app, server, change.tool, change.proposedDigest);
        continue;
      }
      if (approval?.state === "pending" || approval?.state === "denied") continue;
    }
    if (ask) await askAboutChange(env, app, server, change, now);
  }
}

const WITHHELD_REASONS: Record<string, string> = {
  unknown: "it is not a pinned tool of this install",
  conflict: "its name is taken by another app's tool or kept by the platform",
  changed: "its definition changed since the owner consented; the change waits in the Inbox",
  new: "it is new since the owner consented; it waits in the Inbox",
  removed: "it was removed",
};

/** Decides one call: withheld or denied by policy, allowed (by policy or a live grant), or an approval to wait for. */
export async function decideToolCall(
  env: Env,
  app: string,
  server: string,
  call: {
    consentDigest: string;
    tool: string;
    definitionDigest: string;
    argumentsDigest: string;
    argumentsShown: string;
    askTimeoutSeconds: number;
  },
  now: number,
): Promise<ToolCallVerdict> {
  const verdict = await appRegistry(env).toolVerdict(app, server, call.consentDigest, call.tool, call.definitionDigest);
  if (verdict === null)
    return { decision: "refuse", outcome: "withheld", reason: "the install this run serves is no longer the app's" };
  if (!verdict.visible) return { decision: "refuse", outcome: "withheld", reason: WITHHELD_REASONS[verdict.state] };
  if (verdict.policy === "deny") return { decision: "refuse", outcome: "denied_by_policy", reason: "policy deny" };
  if (verdict.policy === "allow") return { decision: "allow", outcome: "allowed" };
  const key = mcpKey(app, server);
  const { approval, byGrant } = await raiseApproval(
    env,
    {
      askedBy: toolAsker(app, server),
      app,
      kind: await toolCallKind(call.tool),
      title: `The agent calls ${call.tool} of ${key}`.slice(0, 200),
      action: {
        route: `mcp ${key}`,
        target: call.tool,
        arguments_digest: call.argumentsDigest,
        summary: `Arguments: ${call.argumentsShown}`.slice(0, 1000),
      },
    },
    ["once", "1h", "30d", "always"],
    call.askTimeoutSeconds * 1000,
    now,
  );
  return byGrant ? { decision: "allow", outcome: "approved" } : { decision: "ask", approvalId: approval.id };
}

/**
 * The ends of calls, in the order they ended: each a security-log row (counted under volume like
 * refusals; the argument values only for a tool whose values the owner logs), a line of the
 * app's recent calls and a live event.
 */
export async function recordToolCalls(
  env: Env,
  app: string,
  server: string,
  calls: ToolCallRecord[],
  now: number,
): Promise<void> {
  const key = mcpKey(app, server);
  const logged = await appRegistry(env).toolCallsRecorded(app, server, calls, now);
  for (const [index, call] of calls.entries()) {
    const outcome =
      call.outcome === "server_error" ? "error" : REFUSED_OUTCOMES.has(call.outcome) ? "refused" : "allowed";
    const values = logged[index] ?? null;
    await audit(env, {
      kind: "mcp_tool_called",
      outcome,
      principal: toolAsker(app, server),
      subject: `${key} ${call.tool}`.slice(0, 300),
      group: `${key} ${call.tool} ${call.outcome}`.slice(0, 300),
      detail: {
        app,
        server,
        tool: call.tool,
        arguments_digest: call.argumentsDigest,
        ...(values !== null ? { arguments: values } : {}),
        outcome: call.outcome,
        duration_ms: call.durationMs,
        approval_id: call.approvalId,
      },
    });
    await emitEvent(env, "mcp.tool_called", { app, server, tool: call.tool, outcome: call.outcome });
  }
}
