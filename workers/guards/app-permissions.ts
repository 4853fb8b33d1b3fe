// Step 5: what an app principal may reach beyond its route row (PERM-*, GRANT-*).
import { GatewayError } from "../contracts/errors";
import type { Env } from "../env";
import type { RouteRow } from "../routes/define";
import type { Principal } from "./principal";

/** Refuses an app principal the path its manifest did not declare. */
export async function checkAppPermission(_env: Env, _row: RouteRow<any, any>, principal: Principal, url: URL, _now: number): Promise<void> {
  if (principal.kind !== "app") return;
  throw new GatewayError("app_not_permitted", { vars: { app: principal.app, path: url.pathname }, detail: { reason: "not_declared" } });
}
