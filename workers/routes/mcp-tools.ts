// The tools of app MCP servers (issue 39): `mcp run` reports what its server offers and asks
// before each call; the owner reads each server's pinned tools with their policy and state,
// sets a tool's policy, and reads the app's recent calls. Changes of a pinned definition and
// `ask` calls are approvals in the Inbox (workers/mcp-tool-calls.ts).
import { z } from "zod";
import type { Env } from "../../durable/env";
import { appRegistry, approvalStore } from "../../durable/instances";
import { APPROVAL_STATES, WaitQuerySchema, type ApprovalView } from "../../kernel/contracts/approvals";
import { GatewayError } from "../../kernel/contracts/errors";
import { mcpKey } from "../../kernel/contracts/mcp";
import {
  POLICY_RANK,
  RecentCallSchema,
  ServerToolsViewSchema,
  type ServerToolsView,
  SetArgumentsLogSchema,
  SetToolPolicySchema,
  ToolCallReportSchema,
  ToolCallRequestSchema,
  ToolCallVerdictSchema,
  ToolsReportSchema,
  ToolViewSchema,
  type ToolView,
  toolAsker,
  toolDefinitionDigest,
} from "../../kernel/contracts/mcp-tools";
import { appNotFound, readRecord } from "../app-registry";
import { assertOwnerPresence } from "../guards/owner-presence";
import { decideToolCall, recordToolCalls, settleToolChanges } from "../mcp-tool-calls";
import { route, type RouteRequest } from "../route-row";

type Params = { app: string; server: string; tool?: string };

function paramsOf(req: { params: Record<string, string> }): Params {
  return req.params as Params;
}

// Definitions cross the RPC boundary as structured clones; their open schemas defeat RPC's
// type mapping, so this one read states its type.
async function toolViews(env: Env, app: string): Promise<ServerToolsView[] | null> {
  return (await appRegistry(env).toolViews(app)) as ServerToolsView[] | null;
}

/** The tools of every declared server of `app`, changes the owner approved applied first (a read raises no question). */
async function serversOf(req: RouteRequest<unknown, unknown>, app: string): Promise<ServerToolsView[]> {
  const before = await toolViews(req.env, app);
  if (before === null) throw appNotFound(app);
  for (const server of before)
    if (server.consentDigest !== null) await settleToolChanges(req.env, app, server.server, req.now, false);
  return (await toolViews(req.env, app)) ?? [];
}

/**
 * One owner's switch of a pinned tool of the current install: a loosening needs owner presence,
 * the change is a row, and the answer is the tool as it is now.
 */
async function setToolSwitch<T>(
  req: RouteRequest<unknown, unknown>,
  change: {
    kind: string;
    loosens: (current: ToolView) => boolean;
    set: (registry: ReturnType<typeof appRegistry>, named: Required<Params>) => Promise<T | null>;
    to: T;
  },
): Promise<{ tool: ToolView }> {
  const named = paramsOf(req) as Required<Params>;
  const { app, server, tool } = named;
  const notFound = () => new GatewayError("mcp_tool_not_found", { vars: { key: mcpKey(app, server), tool } });
  const servers = await serversOf(req, app);
  const current = servers.find((s) => s.server === server)?.tools.find((t) => t.name === tool && t.pinned);
  if (!current) throw notFound();
  if (change.loosens(current)) assertOwnerPresence(req);
  const before = await change.set(appRegistry(req.env), named);
  if (before === null) throw notFound();
  await req.audit({
    kind: change.kind,
    outcome: "allowed",
    subject: `${mcpKey(app, server)} ${tool}`.slice(0, 300),
    detail: { app, server, tool, from: before, to: change.to },
  });
  const after = (await toolViews(req.env, app)) ?? [];
  return { tool: after.find((s) => s.server === server)!.tools.find((t) => t.name === tool)! };
}

export const mcpToolRoutes = [
  route({
    method: "POST",
    path: "/api/internal/mcp/:app/:server/tools",
    family: "internal",
    authz: { kind: "internal-only" },
    internal: true,
    body: ToolsReportSchema,
    contract:
      "`mcp run` reports the tools its server offers (name, title, description, schemas, annotations) for the install it runs. The first report of an install pins them; later, a tool that is new, changed or removed is withheld and raises an approval showing the old and the new text; approving re-pins it. Answers every tool with its state and policy: the agent is shown only the `pinned` ones. 409 mcp_definition_changed when the install is no longer the app's.",
    answer: { schema: z.strictObject({ tools: z.array(ToolViewSchema) }) },
    refuses: ["mcp_server_not_found", "mcp_definition_changed"],
    async handle(req) {
      const { app, server } = paramsOf(req);
      const offered = await Promise.all(
        req.body.tools.map(async (definition) => ({ definition, digest: await toolDefinitionDigest(definition) })),
      );
      const registry = appRegistry(req.env);
      const record = await readRecord(req.env, app);
      if (!record || !Object.hasOwn(record.manifest.mcpServers ?? {}, server))
        throw new GatewayError("mcp_server_not_found", { vars: { key: mcpKey(app, server).slice(0, 140) } });
      if (!(await registry.toolsReport(app, server, req.body.consentDigest, offered, req.now)))
        throw new GatewayError("mcp_definition_changed", {
          vars: { key: mcpKey(app, server), reason: "the app was updated since this run started" },
        });
      await settleToolChanges(req.env, app, server, req.now, true);
      const views = (await toolViews(req.env, app)) ?? [];
      return { tools: views.find((s) => s.server === server)?.tools ?? [] };
    },
  }),
  route({
    method: "POST",
    path: "/api/internal/mcp/:app/:server/calls",
    family: "internal",
    authz: { kind: "internal-only" },
    internal: true,
    body: ToolCallRequestSchema,
    contract:
      "`mcp run` asks before it passes a call on: `refuse` (withheld: not a pinned tool of this install, changed since its pin, or its name taken by an app installed earlier or kept by the platform; denied_by_policy), `allow` (policy allow, or a live grant answered the approval at once: approved), or `ask` with the approval it raised (the arguments as the run showed them, through the text-safety module and cut), which expires after askTimeoutSeconds.",
    answer: { schema: ToolCallVerdictSchema },
    refuses: [],
    async handle(req) {
      const { app, server } = paramsOf(req);
      return decideToolCall(req.env, app, server, req.body, req.now);
    },
  }),
  route({
    method: "GET",
    path: "/api/internal/mcp/:app/:server/calls/:id",
    family: "internal",
    authz: { kind: "internal-only" },
    internal: true,
    query: WaitQuerySchema,
    contract:
      "`mcp run` waits for the owner's answer to a call it asked about: the approval's state; ?wait=N (at most 30) holds the answer until it is no longer pending or N seconds pass. 404 approval_not_found for an approval this server's runs did not raise.",
    answer: { schema: z.strictObject({ state: z.enum(APPROVAL_STATES) }) },
    refuses: ["approval_not_found"],
    async handle(req) {
      const { app, server } = paramsOf(req);
      const id = String(req.params.id).slice(0, 80);
      const store = approvalStore(req.env);
      const seen = (await store.get(id, req.now)) as ApprovalView | null;
      if (!seen || seen.asked_by !== toolAsker(app, server))
        throw new GatewayError("approval_not_found", { vars: { id } });
      const wait = req.query.wait ?? 0;
      const approval = wait > 0 ? ((await store.waitFor(id, wait * 1000, req.now)) as ApprovalView | null) : seen;
      return { state: approval?.state ?? "expired" };
    },
  }),
  route({
    method: "POST",
    path: "/api/internal/mcp/:app/:server/calls/record",
    family: "internal",
    authz: { kind: "internal-only" },
    internal: true,
    body: ToolCallReportSchema,
    contract:
      "`mcp run` reports how calls ended (one report carries the calls that ended while its last one was on its way): per call an `mcp_tool_called` security-log row (app, server, tool, the arguments' sha-256 digest, outcome, duration; the values only for a tool whose values the owner logs), counted under volume like refusals, an `mcp.tool_called` event and a line of the app's recent calls.",
    answer: { schema: z.strictObject({ recorded: z.number().int() }) },
    refuses: [],
    async handle(req) {
      const { app, server } = paramsOf(req);
      await recordToolCalls(req.env, app, server, req.body.calls, req.now);
      return { recorded: req.body.calls.length };
    },
  }),
  route({
    method: "GET",
    path: "/api/mcp/:app/tools",
    family: "mcp",
    authz: { kind: "owner" },
    internal: true,
    contract:
      "Every declared server of the app with the tools pinned for its current install: each tool's definition, policy (allow, ask, deny; who set it) and state (pinned; new, changed or removed and waiting for the owner's approval; conflict), with what the server offers now when it differs.",
    answer: { schema: z.strictObject({ app: z.string(), servers: z.array(ServerToolsViewSchema) }) },
    refuses: ["app_not_found"],
    async handle(req) {
      const { app } = paramsOf(req);
      return { app, servers: await serversOf(req as RouteRequest<unknown, unknown>, app) };
    },
  }),
  route({
    method: "POST",
    path: "/api/mcp/:app/:server/tools/:tool/policy",
    family: "mcp",
    authz: { kind: "owner" },
    internal: true,
    body: SetToolPolicySchema,
    contract:
      "Sets one pinned tool's policy: allow (calls go through), ask (each call waits for the owner's approval), deny. It applies to the next call, in running sessions too. A loosening (deny to ask, anything to allow) needs owner presence (401 fresh_sign_in_required).",
    answer: { schema: z.strictObject({ tool: ToolViewSchema }) },
    refuses: ["app_not_found", "mcp_tool_not_found", "fresh_sign_in_required"],
    handle: (req) =>
      setToolSwitch(req as RouteRequest<unknown, unknown>, {
        kind: "mcp_tool_policy_set",
        loosens: (current) => POLICY_RANK[req.body.policy] > POLICY_RANK[current.policy],
        set: (registry, { app, server, tool }) => registry.toolSetPolicy(app, server, tool, req.body.policy),
        to: req.body.policy,
      }),
  }),
  route({
    method: "POST",
    path: "/api/mcp/:app/:server/tools/:tool/arguments-log",
    family: "mcp",
    authz: { kind: "owner" },
    internal: true,
    body: SetArgumentsLogSchema,
    contract:
      "Turns the logging of one pinned tool's argument values on or off. On, each call's security-log row and recent-calls line keep the arguments as an approval shows them (through the text-safety module, credentials masked, cut to 600 characters) beside their digest; off (the default), only the digest. It applies to the next call, in running sessions too. Turning it on needs owner presence (401 fresh_sign_in_required).",
    answer: { schema: z.strictObject({ tool: ToolViewSchema }) },
    refuses: ["app_not_found", "mcp_tool_not_found", "fresh_sign_in_required"],
    handle: (req) =>
      setToolSwitch(req as RouteRequest<unknown, unknown>, {
        kind: "mcp_tool_arguments_log_set",
        loosens: (current) => req.body.log && !current.logArguments,
        set: (registry, { app, server, tool }) => registry.toolSetLogArguments(app, server, tool, req.body.log),
        to: req.body.log,
      }),
  }),
  route({
    method: "GET",
    path: "/api/mcp/:app/calls",
    family: "mcp",
    authz: { kind: "owner" },
    internal: true,
    contract:
      "The app's recent tool calls through `mcp run`, newest first (at most 100): server, tool, outcome, the arguments' digest and the duration; the arguments themselves only for a tool whose values the owner logs.",
    answer: { schema: z.strictObject({ calls: z.array(RecentCallSchema) }) },
    refuses: ["app_not_found"],
    async handle(req) {
      const { app } = paramsOf(req);
      if ((await readRecord(req.env, app)) === null) throw appNotFound(app);
      return { calls: await appRegistry(req.env).toolRecentCalls(app) };
    },
  }),
];
