// docs/api-routes.md, rendered from the route table.
import { ERROR_CODES, type ErrorCode } from "../../kernel/contracts/errors";
import type { AnyRouteRow } from "../route-row";
import { EVERY_ROUTE_REFUSALS } from "./pipeline-refusals";
import { schemaOutline } from "./schema-outline";
import { describeRoutes, type RouteDescription } from "./table";

function codeList(codes: ReadonlyArray<string>): string {
  return codes.map((code) => `\`${code}\` ${ERROR_CODES[code as ErrorCode].status}`).join(", ");
}

function answerLines(answer: RouteDescription["answer"]): string[] {
  if ("streamed" in answer) return [`- Answer: streamed: ${answer.streamed}`];
  return schemaOutline(`Answer ${answer.status}`, answer.schema);
}

/** The route reference as Markdown, one section per family. */
export function renderRoutesMarkdown(rows: ReadonlyArray<AnyRouteRow>): string {
  const lines = [
    "# API routes",
    "",
    "Generated from the route table (`workers/routes/table.ts`) by `npm run docs:routes`; do not edit by hand.",
    'Every failure answers `{"error": {"code", "message", "detail"?}}` with the HTTP status beside its code below.',
    "Each route lists its query, body and answer fields (the full JSON Schemas are in `docs/openapi.json` and",
    "GET /api/openapi.json) and its refusal codes: those the request pipeline gives",
    "a route like it (by who may call it, whether the internal credential opens it, and the body or query it reads),",
    "then those its handler adds.",
    "",
    `Any route can also refuse: ${codeList(EVERY_ROUTE_REFUSALS)}.`,
    "",
  ];
  const described = describeRoutes(rows);
  const families = [...new Set(described.map((route) => route.family))];
  for (const family of families) {
    lines.push(`## ${family}`, "");
    for (const route of described.filter((r) => r.family === family)) {
      lines.push(`### \`${route.method} ${route.path}\``, "");
      lines.push(route.contract, "");
      lines.push(`- Authorization: ${route.authorization}`);
      lines.push(`- Internal credential: ${route.internal ? "accepted" : "refused"}`);
      if (route.query) lines.push(...schemaOutline("Query", route.query));
      if (route.body) lines.push(...schemaOutline("Body", route.body));
      lines.push(...answerLines(route.answer));
      lines.push(`- Refusals by the pipeline: ${codeList(route.refuses.pipeline) || "none beyond the above"}`);
      lines.push(`- Refusals by the handler: ${codeList(route.refuses.handler) || "none"}`);
      lines.push("");
    }
  }
  return lines.join("\n");
}
