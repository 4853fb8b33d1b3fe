// docs/api-routes.md, rendered from the route table.
import { ERROR_CODES, type ErrorCode } from "../../kernel/contracts/errors";
import type { AnyRouteRow } from "../route-row";
import { EVERY_ROUTE_REFUSALS } from "./pipeline-refusals";
import { describeRoutes, type RouteDescription } from "./table";

const SAFE_INTEGER_BOUNDS: Record<string, number> = {
  minimum: Number.MIN_SAFE_INTEGER,
  maximum: Number.MAX_SAFE_INTEGER,
};

/**
 * A JSON Schema on one line, without what every schema repeats: the `$schema` marker and the
 * safe-integer bounds zod states on every integer.
 */
function compactSchema(schema: unknown): string {
  return JSON.stringify(schema, (key, value: unknown) => {
    if (key === "$schema" || SAFE_INTEGER_BOUNDS[key] === value) return undefined;
    return value;
  });
}

function codeList(codes: ReadonlyArray<string>): string {
  return codes.map((code) => `\`${code}\` ${ERROR_CODES[code as ErrorCode].status}`).join(", ");
}

function answerLine(answer: RouteDescription["answer"]): string {
  if ("streamed" in answer) return `- Answer: streamed: ${answer.streamed}`;
  return `- Answer: ${answer.status} \`${compactSchema(answer.schema)}\``;
}

/** The route reference as Markdown, one section per family. */
export function renderRoutesMarkdown(rows: ReadonlyArray<AnyRouteRow>): string {
  const lines = [
    "# API routes",
    "",
    "Generated from the route table (`workers/routes/table.ts`) by `npm run docs:routes`; do not edit by hand.",
    'Every failure answers `{"error": {"code", "message", "detail"?}}` with the HTTP status beside its code below.',
    "Each route lists its answer (status and JSON Schema) and its refusal codes: those the request pipeline gives",
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
      if (route.query) lines.push(`- Query: \`${compactSchema(route.query)}\``);
      if (route.body) lines.push(`- Body: \`${compactSchema(route.body)}\``);
      lines.push(answerLine(route.answer));
      lines.push(`- Refusals by the pipeline: ${codeList(route.refuses.pipeline) || "none beyond the above"}`);
      lines.push(`- Refusals by the handler: ${codeList(route.refuses.handler) || "none"}`);
      lines.push("");
    }
  }
  return lines.join("\n");
}
