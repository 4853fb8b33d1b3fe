// The route table: every route of the gateway, in one list. Hono registrations, the
// authorization step, GET /api/manifest, the reserved app names and docs/api-routes.md all
// come from it; nothing keeps a second list.
import { z } from "zod";
import { appRoutes } from "./apps";
import { approvalRoutes } from "./approvals";
import { appProxyRoutes } from "./app-proxy";
import { messagingRoutes } from "./messaging";
import { mcpRoutes } from "./mcp";
import { authRoutes } from "./auth";
import { eventRoutes } from "./events";
import { route, type AnyRouteRow } from "../route-row";
import { securityRoutes } from "./security";
import { secretRoutes } from "./secrets";
import { settingsRoutes } from "./settings";
import { statusRoutes } from "./status";

const baseRows: ReadonlyArray<AnyRouteRow> = [
  ...statusRoutes,
  ...authRoutes,
  ...securityRoutes,
  ...messagingRoutes,
  ...appRoutes,
  ...appProxyRoutes,
  ...approvalRoutes,
  ...settingsRoutes,
  ...secretRoutes,
  ...eventRoutes,
  ...mcpRoutes,
];

const manifestRoute = route({
  method: "GET",
  path: "/api/manifest",
  family: "status",
  authz: { kind: "owner" },
  internal: false,
  contract: "Every route with its authorization row, contract and input schemas as JSON Schema.",
  async handle() {
    return { routes: describeRoutes(ROUTES) };
  },
});

export const ROUTES: ReadonlyArray<AnyRouteRow> = [...baseRows, manifestRoute];

export interface RouteDescription {
  method: string;
  path: string;
  family: string;
  authorization: string;
  internal: boolean;
  contract: string;
  body?: unknown;
  query?: unknown;
}

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
    };
    if (row.body) description.body = z.toJSONSchema(row.body, { io: "input", unrepresentable: "any" });
    if (row.query) description.query = z.toJSONSchema(row.query, { io: "input", unrepresentable: "any" });
    return description;
  });
}

/** First path segments under /api/apps/ that routes use literally; no app may be named after one (C-14). */
export function reservedAppNames(rows: ReadonlyArray<AnyRouteRow>): Set<string> {
  const names = new Set<string>();
  for (const row of rows) {
    const match = /^\/api\/apps\/([^/:]+)/.exec(row.path);
    if (match) names.add(match[1]);
  }
  return names;
}
