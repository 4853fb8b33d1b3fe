import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ERROR_CODES } from "../../kernel/contracts/errors";
import { EVERY_ROUTE_REFUSALS, pipelineRefusals } from "./pipeline-refusals";
import { routeTable, type RouteTable } from "../../test/helpers/route-table";

const label = (row: { method: string; path: string }) => `${row.method} ${row.path}`;

describe("every row of the route table states its answer and its refusals", () => {
  let table: RouteTable;
  beforeAll(async () => {
    table = await routeTable();
  });

  it("declares an answer: a zod schema with a success status, or a stated reason it streams", () => {
    expect(table.ROUTES.length).toBeGreaterThan(50);
    for (const row of table.ROUTES) {
      expect(row.answer, label(row)).toBeDefined();
      if ("streamed" in row.answer) {
        expect(row.answer.streamed.length, label(row)).toBeGreaterThan(10);
        continue;
      }
      const { schema, status } = row.answer;
      expect(schema, label(row)).toBeInstanceOf(z.ZodType);
      expect([undefined, 200, 201, 202, 204], label(row)).toContain(status);
      // The reference renders it as JSON Schema: a schema that cannot be rendered is refused here.
      expect(() => z.toJSONSchema(schema, { io: "output" }), label(row)).not.toThrow();
    }
  });

  it("names only registered error codes, each once", () => {
    const registered = new Set(Object.keys(ERROR_CODES));
    for (const code of EVERY_ROUTE_REFUSALS) expect(registered.has(code), code).toBe(true);
    for (const row of table.ROUTES) {
      expect(Array.isArray(row.refuses), label(row)).toBe(true);
      for (const code of [...row.refuses, ...pipelineRefusals(row)])
        expect(registered.has(code), `${label(row)}: ${code}`).toBe(true);
      expect(new Set(row.refuses).size, label(row)).toBe(row.refuses.length);
    }
  });

  it("describes every row with its answer and both sets of refusals for GET /api/manifest", () => {
    const described = table.describeRoutes(table.ROUTES);
    expect(described).toHaveLength(table.ROUTES.length);
    const status = described.find((route) => route.path === "/api/status")!;
    expect(status.answer).toMatchObject({ status: 200, schema: { type: "object" } });
    const raise = described.find((route) => route.method === "POST" && route.path === "/api/approvals")!;
    expect(raise.answer).toMatchObject({ status: 201 });
    expect(raise.refuses.handler).toContain("approvals_not_declared");
    const socket = described.find((route) => route.path === "/api/ws")!;
    expect(socket.answer).toEqual({ streamed: expect.stringContaining("WebSocket") });
  });
});

describe("pipelineRefusals derives a row's refusals from the row alone", () => {
  const Toggle = z.object({ enabled: z.boolean() }).strict();
  const Named = z.object({ name: z.string() }).strict();

  it("gives a bootstrap row without input only the internal credential's refusal", () => {
    expect(pipelineRefusals({ authz: { kind: "bootstrap", why: "public" }, internal: false })).toEqual([
      "internal_route_refused",
    ]);
  });

  it("gives an owner row the signed-out refusals and the app gate's, and a body's refusals", () => {
    const codes = pipelineRefusals({ authz: { kind: "owner" }, internal: true, body: Named });
    expect(codes).toEqual([
      "internal_secret_invalid",
      "internal_call_names_no_work",
      "session_required",
      "session_expired",
      "session_signed_out",
      "app_not_permitted",
      "body_too_large",
      "unsupported_media_type",
      "bad_request",
    ]);
  });

  it("adds field_not_a_boolean only where a body or query takes a boolean", () => {
    expect(pipelineRefusals({ authz: { kind: "owner" }, internal: false, body: Toggle })).toContain(
      "field_not_a_boolean",
    );
    expect(pipelineRefusals({ authz: { kind: "owner" }, internal: false, query: Named })).not.toContain(
      "field_not_a_boolean",
    );
  });

  it("refuses the owner on an internal-only row, and reads no body a raw route streams itself", () => {
    expect(pipelineRefusals({ authz: { kind: "internal-only" }, internal: true })).toContain("internal_only_route");
    const raw = pipelineRefusals({
      authz: { kind: "app-may", why: "own backend", owns: "name" },
      internal: false,
      body: Named,
      rawBody: true,
    });
    expect(raw).not.toContain("unsupported_media_type");
  });

  it("leaves the answer rule's refusals to the handler", () => {
    expect(pipelineRefusals({ authz: { kind: "answer-rule", why: "owner answers" }, internal: true })).toEqual([
      "internal_secret_invalid",
      "internal_call_names_no_work",
    ]);
  });
});
