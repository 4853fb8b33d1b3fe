// The app permission gate's whole rule, pure: given a route's authorization, the path, the
// app and its grants, why the app may not take the route (or null when it may).
import type { AppGrants } from "../../kernel/contracts/app-record";
import type { Authorization } from "../authorization";
import { isOwnerOnly } from "./route-authz";

/** The only route an app token reaches without declaring it (compensated by event scoping, PERM-20). */
const IMPLICIT_ALLOW = ["/api/ws"];

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

/** Why an app may not take this route, or null when it may. Pure: the gate's whole rule. */
export function appAccessRefusal(
  row: { authz: Authorization },
  path: string,
  params: Record<string, string>,
  app: string,
  grants: AppGrants | null,
  reserved: ReadonlySet<string>,
): string | null {
  if (isOwnerOnly(row.authz)) return "owner_only";
  if (!grants || !grants.enabled) return "app_not_enabled";
  if (row.authz.kind === "app-may" && row.authz.owns !== undefined)
    return params[row.authz.owns] === app ? null : "not_its_own";
  // The handler enforces the named grant itself (app messaging checks `appMessaging`).
  if (row.authz.kind === "app-may" && row.authz.grant !== undefined) return null;
  if (isOwnAppPath(path, app, reserved)) return null;
  if (IMPLICIT_ALLOW.includes(path)) return null;
  if (grants.api === null) return "grant_not_a_list";
  return grants.api.some((prefix) => isUnderPrefix(path, prefix)) ? null : "not_declared";
}
