import { beforeAll, describe, expect, it } from "vitest";
import { ERROR_CODES, type ErrorCode } from "../../kernel/contracts/errors";
import { routeTable, type RouteTable } from "../../test/helpers/route-table";

// The document's module is worker code (it declares its own route row), which the Node type
// check does not load: it is imported by a path the checker does not follow, as the route
// table is (test/helpers/route-table.ts), and typed by what this suite reads of it.
type RouteDescription = ReturnType<RouteTable["describeRoutes"]>[number] & { authorization: string };
interface OpenApiModule {
  openApiDocument(routes: ReadonlyArray<RouteDescription>, version: string): unknown;
  openApiPath(path: string): { path: string; params: string[] };
}
const OPENAPI_MODULE: string = "./openapi";
let openApiPath: OpenApiModule["openApiPath"];

type Operation = {
  operationId: string;
  parameters?: Array<{ name: string; in: string; required: boolean }>;
  requestBody?: { required: boolean };
  responses: Record<string, { "x-error-codes"?: string[]; content?: unknown }>;
};
type Doc = { openapi: string; paths: Record<string, Record<string, Operation>> };

describe("the OpenAPI document of the route table", () => {
  let described: RouteDescription[];
  let doc: Doc;
  beforeAll(async () => {
    const table: RouteTable = await routeTable();
    const openapi = (await import(OPENAPI_MODULE)) as OpenApiModule;
    openApiPath = openapi.openApiPath;
    described = table.describeRoutes(table.ROUTES) as RouteDescription[];
    doc = openapi.openApiDocument(described, "1.2.3") as Doc;
  });

  const operationOf = (route: RouteDescription) =>
    doc.paths[openApiPath(route.path).path]?.[route.method.toLowerCase()];

  it("has one operation for every route but the internal-only ones, which it leaves out", () => {
    expect(doc.openapi).toBe("3.1.0");
    const internal = described.filter((route) => route.authorization === "InternalOnly");
    expect(internal.length).toBeGreaterThan(5);
    for (const route of internal) expect(operationOf(route), route.path).toBeUndefined();
    expect(Object.keys(doc.paths).some((path) => path.startsWith("/api/internal/"))).toBe(false);
    for (const route of described.filter((r) => r.authorization !== "InternalOnly")) {
      expect(operationOf(route), `${route.method} ${route.path}`).toBeDefined();
    }
    const ids = Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((op) => op.operationId));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("names every path parameter, and every refusal code under its status", () => {
    for (const route of described.filter((r) => r.authorization !== "InternalOnly")) {
      const op = operationOf(route)!;
      const pathParams = (op.parameters ?? []).filter((p) => p.in === "path").map((p) => p.name);
      expect(pathParams, route.path).toEqual(openApiPath(route.path).params);
      for (const code of [...route.refuses.pipeline, ...route.refuses.handler]) {
        const status = String(ERROR_CODES[code as ErrorCode].status);
        expect(op.responses[status]?.["x-error-codes"], `${route.path} ${code}`).toContain(code);
      }
      if (!("streamed" in route.answer)) expect(op.responses[String(route.answer.status)]).toBeDefined();
    }
  });

  it("writes :params and a trailing * the way OpenAPI names them", () => {
    expect(openApiPath("/api/apps/:name/folders/:need")).toEqual({
      path: "/api/apps/{name}/folders/{need}",
      params: ["name", "need"],
    });
    expect(openApiPath("/apps/:name/api/*")).toEqual({ path: "/apps/{name}/api/{path}", params: ["name", "path"] });
  });

  it("marks a body required only when its schema requires a field (an empty body reads as {})", () => {
    const preview = doc.paths["/api/apps/preview"]!.post!;
    expect(preview.requestBody?.required).toBe(true);
    const enable = doc.paths["/api/apps/{name}/enable"]!.post!;
    expect(enable.requestBody?.required ?? false).toBe(false);
  });
});
