// docs/api-routes.md, rendered from the route table.
import type { AnyRouteRow } from "../route-row";
import { describeRoutes } from "./table";

/** The route reference as Markdown, one section per family. */
export function renderRoutesMarkdown(rows: ReadonlyArray<AnyRouteRow>): string {
  const lines = [
    "# API routes",
    "",
    "Generated from the route table (`workers/routes/table.ts`) by `npm run docs:routes`; do not edit by hand.",
    'Every failure answers `{"error": {"code", "message", "detail"?}}`.',
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
      if (route.query) lines.push(`- Query: \`${JSON.stringify(route.query)}\``);
      if (route.body) lines.push(`- Body: \`${JSON.stringify(route.body)}\``);
      lines.push("");
    }
  }
  return lines.join("\n");
}
