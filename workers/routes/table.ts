// The route table: every route of the gateway, in one list. Hono registrations, the
// authorization step, GET /api/manifest, the reserved app names and docs/api-routes.md all
// come from it; nothing keeps a second list.
import { z } from "zod";
import { appRoutes } from "./apps";
import { appCallbackRoutes } from "./app-callbacks";
import { folderRoutes } from "./folders";
import { approvalRoutes } from "./approvals";
import { appProxyRoutes } from "./app-proxy";
import { messagingRoutes } from "./messaging";
import { mcpRoutes } from "./mcp";
import { openApiRoute } from "./openapi";
import { mcpToolRoutes } from "./mcp-tools";
import { authRoutes } from "./auth";
import { eventRoutes } from "./events";
import { route, type AnyRouteRow, type RouteAnswer } from "../route-row";
import { pipelineRefusals } from "./pipeline-refusals";
import { securityRoutes } from "./security";
import { secretRoutes } from "./secrets";
import { durabilityRoutes } from "./durability";
import { edgeRoutes } from "./edge";
import { settingsRoutes } from "./settings";
import { sourceRoutes } from "./sources";
import { statusRoutes } from "./status";

const baseRows: ReadonlyArray<AnyRouteRow> = [
  ...statusRoutes,
  ...authRoutes,
  ...securityRoutes,
  ...messagingRoutes,
  ...appRoutes,
  ...appCallbackRoutes,
  ...folderRoutes,
  ...appProxyRoutes,
  ...approvalRoutes,
  ...settingsRoutes,
  ...secretRoutes,
  ...eventRoutes,
  ...mcpRoutes,
  ...durabilityRoutes,
  ...sourceRoutes,
  ...mcpToolRoutes,
  ...edgeRoutes,
];

/** One route as data: what GET /api/manifest answers and docs/api-routes.md renders. */
export const RouteDescriptionSchema = z.strictObject({
  method: z.string(),
  path: z.string(),
  family: z.string(),
  authorization: z.string(),
  internal: z.boolean(),
  contract: z.string(),
  body: z.unknown().optional(),
  query: z.unknown().optional(),
  /** The success status and the answer's JSON Schema, or what a streamed answer carries. */
  answer: z.union([
    z.strictObject({ status: z.number().int(), schema: z.unknown() }),
    z.strictObject({ streamed: z.string() }),
  ]),
  /** The refusal codes: those the pipeline gives a row like this one, and those its handler adds. */
  refuses: z.strictObject({ pipeline: z.array(z.string()), handler: z.array(z.string()) }),
});
export type RouteDescription = z.infer<typeof RouteDescriptionSchema>;

const manifestRoute = route({
  method: "GET",
  path: "/api/manifest",
  family: "status",
  authz: { kind: "owner" },
  internal: false,
  contract:
    "Every route with its authorization row, contract, input schemas and answer schema as JSON Schema, and its refusal codes.",
  answer: { schema: z.strictObject({ routes: z.array(RouteDescriptionSchema) }) },
  refuses: [],
  async handle() {
    return { routes: describeRoutes(ROUTES) };
  },
});

export const ROUTES: ReadonlyArray<AnyRouteRow> = [
  ...baseRows,
  manifestRoute,
  openApiRoute(() => describeRoutes(ROUTES)),
];

function authorizationText(row: AnyRouteRow): string {
  switch (row.authz.kind) {
    case "bootstrap":
      return `bootstrap (${row.authz.why})`;
    case "owner":
      return "OwnerOnly";
    case "internal-only":
      return "InternalOnly";
    case "answer-rule":
      return `OwnerAnswers (${row.authz.why})`;
    case "app-may":
      return `AppMay (${row.authz.why}${row.authz.owns ? `; owns :${row.authz.owns}` : ""})`;
  }
}

function answerDescription(answer: RouteAnswer): RouteDescription["answer"] {
  if ("streamed" in answer) return { streamed: answer.streamed };
  return {
    status: answer.status ?? 200,
    schema: z.toJSONSchema(answer.schema, { io: "output", unrepresentable: "any" }),
  };
}

/** The route table as data: what GET /api/manifest answers and docs/api-routes.md renders. */
export function describeRoutes(rows: ReadonlyArray<AnyRouteRow>): RouteDescription[] {
  return rows.map((row) => {
    const description: RouteDescription = {
      method: row.method,
      path: row.path,
      family: row.family,
      authorization: authorizationText(row),
      internal: row.internal,
      contract: row.contract,
      answer: answerDescription(row.answer),
      refuses: { pipeline: pipelineRefusals(row), handler: [...new Set(row.refuses)] },
    };
    if (row.body) description.body = z.toJSONSchema(row.body, { io: "input", unrepresentable: "any" });
    if (row.query) description.query = z.toJSONSchema(row.query, { io: "input", unrepresentable: "any" });
    return description;
  });
}

/**
 * Every place a gateway path holds an app's name as one segment: the app's own subtrees, the
 * internal routes about one app, and its MCP servers (`:app`). A literal segment in the same
 * place is a route of the gateway's that an app of that name would shadow or implicitly own.
 */
export const APP_NAME_PLACES = ["/api/apps/", "/apps/", "/api/internal/apps/", "/api/mcp/", "/api/internal/mcp/"];

/**
 * Segments the platform keeps under /api/apps/ for routes of its own that the requirements name
 * and this core does not serve yet: the store's registry and registries, its blob proxy, install,
 * register and sources (PERM-19, MAN-05, C-14). Implicit ownership must never apply to them, even
 * for an app already installed under one, so no app may take one now.
 */
const KEPT_FOR_PLATFORM_ROUTES = ["registry", "registries", "blob", "install", "register", "sources"];

/**
 * The names no app may take (C-14): every literal segment of any route where an app's name sits
 * (APP_NAME_PLACES), and the segments kept for the platform's own routes.
 */
export function reservedAppNames(rows: ReadonlyArray<AnyRouteRow>): Set<string> {
  const names = new Set<string>(KEPT_FOR_PLATFORM_ROUTES);
  for (const row of rows) {
    for (const place of APP_NAME_PLACES) {
      if (!row.path.startsWith(place)) continue;
      const segment = row.path.slice(place.length).split("/")[0]!;
      if (segment !== "" && !segment.startsWith(":") && segment !== "*") names.add(segment);
    }
  }
  return names;
}
