// Step 3: turns the presented credentials into one principal through SessionStore.
import { GatewayError } from "../../kernel/contracts/errors";
import type { Env } from "../../durable/env";
import { authModeInForce } from "../../kernel/contracts/auth-mode";
import { browserRefusal, type PresentedCredentials } from "./credentials";
import type { OwnerPrincipal, Principal } from "./principal";
import { sessions } from "../sessions";
import { doorCredentialRefused } from "./backend-door";

/**
 * An app token never authorizes as the owner: beside an owner session it narrows it, alone
 * it is the app's own work (C-1). A Bearer that cannot authorize is refused outright; a bad
 * cookie is kept as the refusal an owner-only route will give. Through an app backend's door
 * (`throughDoor`) only an app token counts: an owner Bearer is refused (the edge refused the
 * other carriers), and auth mode `none` makes nobody the owner there (backend-door.ts).
 */
export async function resolvePrincipal(
  env: Env,
  creds: PresentedCredentials,
  now: number,
  throughDoor = false,
): Promise<Principal> {
  const store = sessions(env);
  let owner: OwnerPrincipal | null = null;
  let app: { app: string; tokenId: string } | null = null;
  let refusal: GatewayError | null = null;

  if (creds.bearer !== null) {
    const checked = await store.check(creds.bearer, now);
    if (!checked.ok) throw new GatewayError("auth_bearer_invalid");
    const s = checked.session;
    if (s.kind === "app") app = { app: s.app!, tokenId: s.id };
    else if (throughDoor) throw doorCredentialRefused("an owner Bearer token");
    else owner = { kind: "owner", sessionId: s.id, signedInAt: s.signedInAt, via: "bearer" };
  }
  if (creds.appToken !== null && app === null) {
    const checked = await store.check(creds.appToken, now);
    if (!checked.ok || checked.session.kind !== "app") throw new GatewayError("auth_bearer_invalid");
    app = { app: checked.session.app!, tokenId: checked.session.id };
  }
  if (owner === null && creds.cookie !== null) {
    const checked = await store.check(creds.cookie, now);
    if (checked.ok && checked.session.kind !== "app") {
      owner = { kind: "owner", sessionId: checked.session.id, signedInAt: checked.session.signedInAt, via: "cookie" };
    } else {
      refusal = checked.ok ? browserRefusal("not_signed_in", null) : browserRefusal(checked.reason, checked.at);
    }
  }
  if (owner === null && !throughDoor && authModeInForce(env).mode === "none") {
    owner = { kind: "owner", sessionId: null, signedInAt: now, via: "auth-off" };
  }
  if (app !== null) return { kind: "app", app: app.app, tokenId: app.tokenId, narrows: owner };
  if (owner !== null) return owner;
  return { kind: "anonymous", refusal };
}
