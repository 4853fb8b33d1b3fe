// Step 5: what an app principal may reach on a route whose row lets apps in (PERM-01..05,
// PERM-18..21), owner-only rows included, so every refusal is logged: a row that names the
// app it addresses (`owns`) is held to the caller's own app; otherwise the app reaches its
// own `/apps/<name>/` and `/api/apps/<name>/` (path boundary, never a reserved segment),
// `/api/ws`, and the `permissions.api` prefixes it declared — matched on the pathname only,
// at a path boundary. Each refusal is one security-log row per app, route and reason in 5 min.
import { GatewayError } from "../contracts/errors";
import type { Env } from "../env";
import { audit } from "../audit";
import { appRegistry } from "../app-registry";
import type { RouteRow } from "../routes/define";
import type { Principal } from "./principal";
import { appAccessRefusal } from "./app-access-rule";

const DEDUP_WINDOW_MS = 5 * 60 * 1000;
const recentRefusals = new Map<string, number>();

async function refuse(env: Env, app: string, row: RouteRow<any, any>, path: string, reason: string, now: number): Promise<never> {
  const key = `${app}|${row.method} ${row.path}|${reason}`;
  const last = recentRefusals.get(key);
  if (last === undefined || now - last > DEDUP_WINDOW_MS) {
    if (recentRefusals.size > 10_000) recentRefusals.clear();
    recentRefusals.set(key, now);
    await audit(env, { kind: "app_not_permitted", outcome: "refused", principal: `app:${app}`, subject: `${row.method} ${path}`, detail: { reason, route: row.path } });
  }
  throw new GatewayError("app_not_permitted", { vars: { app, path }, detail: { reason } });
}

/** Refuses an app principal what its row and its manifest do not give it. */
export async function checkAppPermission(
  env: Env,
  row: RouteRow<any, any>,
  principal: Principal,
  url: URL,
  params: Record<string, string>,
  reserved: ReadonlySet<string>,
  now: number,
): Promise<void> {
  if (principal.kind !== "app") return;
  const grants = await appRegistry(env).grants(principal.app);
  const reason = appAccessRefusal(row, url.pathname, params, principal.app, grants, reserved);
  if (reason !== null) await refuse(env, principal.app, row, url.pathname, reason, now);
}
