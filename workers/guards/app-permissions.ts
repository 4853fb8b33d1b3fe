// Step 5: what an app principal may reach on a route whose row lets apps in (PERM-01..05,
// PERM-18..21), owner-only rows included, so every refusal is logged: a row that names the
// app it addresses (`owns`) is held to the caller's own app; otherwise the app reaches its
// own `/apps/<name>/` and `/api/apps/<name>/` (path boundary, never a reserved segment),
// `/api/ws`, and the `permissions.api` prefixes it declared — matched on the pathname only,
// at a path boundary. Every refusal goes to the security log, grouped by app, route pattern
// and reason; the log counts identical ones in one row (durable/security-log/refusal-windows.ts).
import { GatewayError } from "../../kernel/contracts/errors";
import type { Env } from "../../durable/env";
import { audit } from "../../durable/security-log/audit";
import { grantsOf } from "../app-registry";
import type { AnyRouteRow } from "../route-row";
import type { Principal } from "./principal";
import { appAccessRefusal } from "./app-access-rule";
import { refusalGroup } from "../refusal-group";

async function refuse(env: Env, app: string, row: AnyRouteRow, path: string, reason: string): Promise<never> {
  await audit(env, {
    kind: "app_not_permitted",
    outcome: "refused",
    principal: `app:${app}`,
    subject: `${row.method} ${path}`,
    detail: { reason, route: row.path },
    group: refusalGroup(row.method, path, [], row, reason),
  });
  throw new GatewayError("app_not_permitted", { vars: { app, path }, detail: { reason } });
}

/** Refuses an app principal what its row and its manifest do not give it. */
export async function checkAppPermission(
  env: Env,
  row: AnyRouteRow,
  principal: Principal,
  url: URL,
  params: Record<string, string>,
  reserved: ReadonlySet<string>,
): Promise<void> {
  if (principal.kind !== "app") return;
  const grants = await grantsOf(env, principal.app);
  const reason = appAccessRefusal(row, url.pathname, params, principal.app, grants, reserved);
  if (reason !== null) await refuse(env, principal.app, row, url.pathname, reason);
}
