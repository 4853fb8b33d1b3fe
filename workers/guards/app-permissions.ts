// Step 5: what an app principal may reach on a route whose row lets apps in (PERM-01..05,
// PERM-18..21). Owner-only rows already refused it in step 4. Here: a row that names the
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

const IMPLICIT_ALLOW = ["/api/ws"];
const DEDUP_WINDOW_MS = 5 * 60 * 1000;
const recentRefusals = new Map<string, number>();

/** True when `path` is `prefix` itself or lies below it at a path boundary ("/a/b" never matches "/a/bc"). */
export function isUnderPrefix(path: string, prefix: string): boolean {
  if (prefix === "" || !prefix.startsWith("/")) return false;
  if (prefix.endsWith("/")) return path.startsWith(prefix) || path === prefix.slice(0, -1);
  return path === prefix || path.startsWith(`${prefix}/`);
}

/** Whether the app implicitly owns this path: its own subtree, never a reserved segment (PERM-18/19). */
export function isOwnAppPath(path: string, app: string, reserved: ReadonlySet<string>): boolean {
  if (reserved.has(app)) return false;
  return isUnderPrefix(path, `/apps/${app}`) || isUnderPrefix(path, `/api/apps/${app}`);
}

async function refuse(env: Env, app: string, row: RouteRow<any, any>, path: string, reason: string, now: number): Promise<never> {
  const key = `${app}|${row.method} ${row.path}|${reason}`;
  const last = recentRefusals.get(key);
  if (last === undefined || now - last > DEDUP_WINDOW_MS) {
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
  const app = principal.app;
  const path = url.pathname;
  const grants = await appRegistry(env).grants(app);
  if (!grants || !grants.enabled) return refuse(env, app, row, path, "app_not_enabled", now);
  if (row.authz.kind === "app-may" && row.authz.owns !== undefined) {
    if (params[row.authz.owns] !== app) return refuse(env, app, row, path, "not_its_own", now);
    return;
  }
  // The handler enforces the named grant itself (app messaging checks `appMessaging`).
  if (row.authz.kind === "app-may" && row.authz.grant !== undefined) return;
  if (isOwnAppPath(path, app, reserved)) return;
  if (IMPLICIT_ALLOW.includes(path)) return;
  if (grants.api === null) return refuse(env, app, row, path, "grant_not_a_list", now);
  if (grants.api.some((prefix) => isUnderPrefix(path, prefix))) return;
  return refuse(env, app, row, path, "not_declared", now);
}
