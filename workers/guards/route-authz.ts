// Step 4: every route's row decides who may call it. An owner-only row refuses every app
// whatever its manifest declared or its path names (C-1, C-15); a bootstrap row needs no principal.
import { GatewayError } from "../../kernel/contracts/errors";
import type { Authorization } from "../authorization";
import { browserRefusal } from "./credentials";
import type { Principal } from "./principal";

/**
 * The owner-only rule: rows no app may take, whatever it declared, owns or was granted. The
 * app permission gate (step 5) applies it first, so each such refusal is logged with its app.
 */
export function isOwnerOnly(authz: Authorization): boolean {
  return authz.kind === "owner" || authz.kind === "internal-only" || authz.kind === "answer-rule";
}

/**
 * Throws the refusal for a principal the row does not admit; true when the app permission
 * gate (step 5) still has to judge an app principal.
 */
export function authorizeRoute(
  row: { authz: Authorization; method: string },
  principal: Principal,
  path: string,
): boolean {
  if (row.authz.kind === "bootstrap") return false;
  // The handler's answer rule judges every principal, the app's included (APPR-01).
  if (row.authz.kind === "answer-rule") return false;
  if (row.authz.kind === "internal-only" && principal.kind !== "internal" && principal.kind !== "app") {
    if (principal.kind === "anonymous") throw principal.refusal ?? browserRefusal("not_signed_in", null);
    throw new GatewayError("internal_only_route", { vars: { method: row.method, path } });
  }
  switch (principal.kind) {
    case "internal":
      return false;
    case "owner":
      return false;
    case "anonymous":
      throw principal.refusal ?? browserRefusal("not_signed_in", null);
    case "app":
      // Step 5 judges every app request, owner-only rows included, so each refusal is logged.
      return true;
  }
}
