// GET /api/openapi.json and docs/openapi.json: the route table as an OpenAPI 3.1 document, so a
// toolchain can generate a typed client. Built from the same descriptions GET /api/manifest
// answers; internal-only routes are left out (no client outside the gateway may call them).
import { z } from "zod";
import { ERROR_CODES, type ErrorCode } from "../../kernel/contracts/errors";
import { route, type AnyRouteRow } from "../route-row";
import { EVERY_ROUTE_REFUSALS } from "./pipeline-refusals";
import type { RouteDescription } from "./table";

type JsonSchema = Record<string, unknown>;

const ERROR_ENVELOPE: JsonSchema = {
  type: "object",
  properties: {
    error: {
      type: "object",
      properties: { code: { type: "string" }, message: { type: "string" }, detail: {} },
      required: ["code", "message"],
    },
  },
  required: ["error"],
};

/** A JSON Schema as an OpenAPI 3.1 document embeds it: the document names the dialect once. */
function embedded(schema: unknown): JsonSchema {
  const { $schema: _dialect, ...rest } = schema as JsonSchema;
  return rest;
}

/** `/api/apps/:name/folders/:need` as `/api/apps/{name}/folders/{need}`; a trailing `*` becomes `{path}`. */
export function openApiPath(path: string): { path: string; params: string[] } {
  const params: string[] = [];
  const segments = path.split("/").map((segment) => {
    if (segment.startsWith(":")) {
      params.push(segment.slice(1));
      return `{${segment.slice(1)}}`;
    }
    if (segment === "*") {
      params.push("path");
      return "{path}";
    }
    return segment;
  });
  return { path: segments.join("/"), params };
}

function operationId(method: string, path: string): string {
  const words = path
    .split("/")
    .filter((segment) => segment !== "")
    .map((segment) => (segment === "*" ? "path" : segment.replace(/^:/, "by_").replace(/[^A-Za-z0-9]+/g, "_")));
  return [method.toLowerCase(), ...words].join("_");
}

function parameters(route: RouteDescription, pathParams: string[]): JsonSchema[] {
  const list: JsonSchema[] = pathParams.map((name) => ({
    name,
    in: "path",
    required: true,
    schema: { type: "string" },
  }));
  const query = route.query as { properties?: Record<string, unknown>; required?: string[] } | undefined;
  for (const [name, schema] of Object.entries(query?.properties ?? {})) {
    list.push({ name, in: "query", required: query?.required?.includes(name) ?? false, schema: embedded(schema) });
  }
  return list;
}

/** The refusals of a route grouped by status, each an error envelope whose code is one of them. */
function refusalResponses(codes: ReadonlyArray<string>): Record<string, JsonSchema> {
  const byStatus = new Map<number, string[]>();
  for (const code of new Set(codes)) {
    const status = ERROR_CODES[code as ErrorCode].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, JsonSchema> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[String(status)] = {
      description: `Refused: ${list.join(", ")}.`,
      "x-error-codes": list,
      content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorEnvelope" } } },
    };
  }
  return responses;
}

function answerResponse(answer: RouteDescription["answer"]): Record<string, JsonSchema> {
  if ("streamed" in answer) return { "200": { description: `Streamed: ${answer.streamed}` } };
  const content = answer.status === 204 ? {} : { content: { "application/json": { schema: embedded(answer.schema) } } };
  return { [String(answer.status)]: { description: "Success.", ...content } };
}

function operation(route: RouteDescription, pathParams: string[]): JsonSchema {
  const op: JsonSchema = {
    operationId: operationId(route.method, route.path),
    summary: route.contract,
    tags: [route.family],
    "x-authorization": route.authorization,
    security: route.authorization.startsWith("bootstrap") ? [{}, { bearer: [] }] : [{ bearer: [] }],
  };
  const params = parameters(route, pathParams);
  if (params.length > 0) op.parameters = params;
  if (route.body) {
    const body = embedded(route.body);
    const required = Array.isArray(body.required) && body.required.length > 0;
    op.requestBody = { required, content: { "application/json": { schema: body } } };
  }
  op.responses = {
    ...refusalResponses([...EVERY_ROUTE_REFUSALS, ...route.refuses.pipeline, ...route.refuses.handler]),
    ...answerResponse(route.answer),
  };
  return op;
}

/** The OpenAPI 3.1 document of every route an owner, an app or a script may call. */
export function openApiDocument(routes: ReadonlyArray<RouteDescription>, version: string): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    if (route.authorization === "InternalOnly") continue;
    const { path, params } = openApiPath(route.path);
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = operation(route, params);
  }
  return {
    openapi: "3.1.0",
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    info: {
      title: "PersonalClaw gateway",
      version,
      description:
        'Generated from the route table. Every failure answers {"error": {"code", "message", "detail"?}}; each refusal response lists its codes in x-error-codes.',
    },
    servers: [{ url: "http://127.0.0.1:10000" }],
    components: {
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description: "An owner token (the part after ?token= of a sign-in link) or an app token.",
        },
      },
      schemas: { ErrorEnvelope: ERROR_ENVELOPE },
    },
    paths,
  };
}

/** The row of GET /api/openapi.json; `describe` hands in the table's descriptions (the table registers this row). */
export function openApiRoute(describe: () => ReadonlyArray<RouteDescription>): AnyRouteRow {
  return route({
    method: "GET",
    path: "/api/openapi.json",
    family: "status",
    authz: { kind: "owner" },
    internal: false,
    contract: "The OpenAPI 3.1 document of every route but the internal ones, generated from the route table.",
    answer: {
      schema: z.looseObject({ openapi: z.literal("3.1.0"), info: z.looseObject({}), paths: z.looseObject({}) }),
    },
    refuses: [],
    async handle({ env }) {
      return openApiDocument(describe(), env.VERSION);
    },
  });
}
