// The gateway's route table, loaded for Node-side suites. The table is worker code (its
// handlers reach workerd bindings), which the Node type check does not load, so it is
// imported by a path the type checker does not follow, and typed here by the fields the
// suites read: each row's place, who may call it, its input and its declared answer.
import type { z } from "zod";
import type { RowShape } from "../../workers/routes/pipeline-refusals";

export interface TableRow extends RowShape {
  method: string;
  path: string;
  answer: { status?: number; schema: z.ZodType } | { streamed: string };
  refuses: string[];
}

export interface RouteTable {
  ROUTES: ReadonlyArray<TableRow>;
  describeRoutes: (rows: ReadonlyArray<TableRow>) => Array<{
    method: string;
    path: string;
    answer: { status: number; schema: unknown } | { streamed: string };
    refuses: { pipeline: string[]; handler: string[] };
  }>;
  /** The names no app may take, as the gateway derives them from its rows. */
  reservedAppNames: (rows: ReadonlyArray<TableRow>) => Set<string>;
  /** Every place a gateway path holds an app's name. */
  APP_NAME_PLACES: readonly string[];
}

/** The reserved app names the real route table derives: what every test of a reserved name uses. */
export async function derivedReservedAppNames(): Promise<ReadonlySet<string>> {
  const table = await routeTable();
  return table.reservedAppNames(table.ROUTES);
}

const TABLE_MODULE: string = "../../workers/routes/table";

/** The route table module as the gateway's worker builds it. */
export async function routeTable(): Promise<RouteTable> {
  return (await import(TABLE_MODULE)) as RouteTable;
}
