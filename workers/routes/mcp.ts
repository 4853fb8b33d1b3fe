// App MCP servers (MCP-01..07, issue 20). `/api/mcp` is the owner's, reads included (MCP-06):
// a server entry is a command PersonalClaw starts, so an app can never add or change one here;
// the manifest the owner consented to is the only way a server comes to exist. `mcp run` (the
// command mcp.json names) asks the internal launch route before it starts anything.
import { appRegistry } from "../../durable/instances";
import { z } from "zod";
import { GatewayError } from "../../kernel/contracts/errors";
import {
  McpAliveQuerySchema,
  McpLaunchAnswerSchema,
  McpLaunchRequestSchema,
  McpServerViewSchema,
  McpStartReportSchema,
  mcpKey,
} from "../../kernel/contracts/mcp";
import { readRecord } from "../app-registry";
import { flagMcpServer } from "../mcp-registration";
import { route } from "../route-row";

const Toggle = z.object({ enabled: z.boolean() }).strict();
const Empty = z.object({}).strict();
const OneServer = z.strictObject({ server: McpServerViewSchema.nullable() });

function notFound(app: string, server: string): GatewayError {
  return new GatewayError("mcp_server_not_found", { vars: { key: mcpKey(app, server).slice(0, 140) } });
}

export const mcpRoutes = [
  route({
    method: "GET",
    path: "/api/mcp",
    family: "mcp",
    authz: { kind: "owner" },
    internal: true,
    contract:
      "Every MCP server the installed apps declare, as `<app>:<server>`: app, transport, state (registered, off, failing after 3 failed starts, starting, app_disabled), the owner's switch, failed starts and the last start (exit code and the stderr line saying why).",
    answer: { schema: z.strictObject({ servers: z.array(McpServerViewSchema) }) },
    refuses: [],
    async handle({ env, now }) {
      return { servers: await appRegistry(env).mcpServers(now) };
    },
  }),
  route({
    method: "POST",
    path: "/api/mcp/:app/:server/toggle",
    family: "mcp",
    authz: { kind: "owner" },
    internal: true,
    body: Toggle,
    contract:
      'Turns one app server on or off: off, `mcp run` refuses it and its mcp.json entry carries "disabled": true. 404 mcp_server_not_found when no installed app declares it.',
    answer: { schema: OneServer },
    refuses: ["mcp_server_not_found", "mcp_json_unreadable", "bridge_unavailable"],
    async handle(req) {
      const { app, server } = req.params as { app: string; server: string };
      if (!(await appRegistry(req.env).mcpSetEnabled(app, server, req.body.enabled))) throw notFound(app, server);
      const record = await readRecord(req.env, app);
      if (record?.enabled) await flagMcpServer(req.env, mcpKey(app, server), req.body.enabled);
      await req.audit({
        kind: "mcp_server_toggled",
        outcome: "allowed",
        subject: mcpKey(app, server),
        detail: { enabled: req.body.enabled },
      });
      return {
        server: (await appRegistry(req.env).mcpServers(req.now)).find((s) => s.key === mcpKey(app, server)) ?? null,
      };
    },
  }),
  route({
    method: "POST",
    path: "/api/mcp/:app/:server/retry",
    family: "mcp",
    authz: { kind: "owner" },
    internal: true,
    body: Empty,
    contract: "Forgets a server's failed starts, so the next `mcp run` starts it again (MCP-04).",
    answer: { schema: OneServer },
    refuses: ["mcp_server_not_found"],
    async handle(req) {
      const { app, server } = req.params as { app: string; server: string };
      if (!(await appRegistry(req.env).mcpRetry(app, server))) throw notFound(app, server);
      await req.audit({ kind: "mcp_server_retried", outcome: "allowed", subject: mcpKey(app, server) });
      return {
        server: (await appRegistry(req.env).mcpServers(req.now)).find((s) => s.key === mcpKey(app, server)) ?? null,
      };
    },
  }),
  route({
    method: "POST",
    path: "/api/internal/mcp/:app/:server/launch",
    family: "internal",
    authz: { kind: "internal-only" },
    internal: true,
    body: McpLaunchRequestSchema,
    contract:
      "`mcp run` asks to start a server: refused while the app is disabled or uninstalled, the server off, failing (3 failed starts), already starting, or when the definition found in the app's folder is not the consented one (409 mcp_definition_changed). Allowed, it answers the consented command, args and env and what the sandbox needs.",
    answer: { schema: McpLaunchAnswerSchema },
    refuses: [
      "mcp_server_not_found",
      "app_disabled",
      "mcp_server_off",
      "mcp_server_failing",
      "mcp_server_starting",
      "mcp_not_stdio",
      "mcp_definition_changed",
    ],
    async handle(req) {
      const { app, server } = req.params as { app: string; server: string };
      const verdict = await appRegistry(req.env).mcpLaunch(app, server, req.body.definitionDigest, req.now);
      if (!verdict.ok) {
        await req.audit({
          kind: "mcp_start_refused",
          outcome: "refused",
          subject: mcpKey(app, server).slice(0, 140),
          detail: { code: verdict.code },
        });
        throw new GatewayError(verdict.code, {
          vars: verdict.vars,
          ...(verdict.code === "mcp_server_starting"
            ? { detail: { retryable: true }, headers: { "Retry-After": "1" } }
            : {}),
        });
      }
      await req.audit({ kind: "mcp_started", outcome: "allowed", subject: mcpKey(app, server) });
      return verdict.answer;
    },
  }),
  route({
    method: "GET",
    path: "/api/internal/mcp/:app/:server/alive",
    family: "internal",
    authz: { kind: "internal-only" },
    internal: true,
    query: McpAliveQuerySchema,
    contract:
      "`mcp run` asks every few seconds whether its server may go on (?consent= the install it was started for, ?folders= the stamp of the folder grants it started with): false once the app is disabled, uninstalled or updated, its folders changed, or the owner turned the server off, and it then ends the server (MCP-01: the connection closes).",
    answer: { schema: z.strictObject({ alive: z.boolean(), reason: z.string().nullable() }) },
    refuses: [],
    async handle(req) {
      const { app, server } = req.params as { app: string; server: string };
      return appRegistry(req.env).mcpAlive(app, server, req.query.consent ?? null, req.query.folders ?? null);
    },
  }),
  route({
    method: "POST",
    path: "/api/internal/mcp/:app/:server/started",
    family: "internal",
    authz: { kind: "internal-only" },
    internal: true,
    body: McpStartReportSchema,
    contract:
      "`mcp run` reports how a start went: answered, or exited first with its code and the stderr line saying why.",
    answer: { schema: z.strictObject({ recorded: z.literal(true) }) },
    refuses: ["mcp_server_not_found"],
    async handle(req) {
      const { app, server } = req.params as { app: string; server: string };
      if (!(await appRegistry(req.env).mcpStarted(app, server, req.body, req.now))) throw notFound(app, server);
      return { recorded: true };
    },
  }),
];
