// The browser's entry link (AUTH-08): `?token=` is exchanged, on whatever path it arrives,
// for a browser session in the HttpOnly cookie, and the browser is redirected to the same
// URL without the token so it never stays in the address bar, history or a Referer.
import { emitEvent } from "../../durable/event-hub/emit";
import { GatewayError } from "../../kernel/contracts/errors";
import { audit } from "../../durable/security-log/audit";
import { browserRefusal, sessionCookieHeaders } from "../guards/credentials";
import { clientAddress } from "../guards/client-address";
import { presentedCredentials } from "../guards/parsed-request";
import { sessions as sessionDoor } from "../sessions";
import { browserSessionTtlMs } from "../sessions";
import type { GatewayContext } from "../route-row";
import { refusalSubject } from "../refusal-group";

/** Exchanges the `?token=` link of a request that carries one for a session cookie and a redirect. */
export async function exchangeSignInLink(c: GatewayContext, requestUrl: URL): Promise<Response> {
  const url = new URL(requestUrl);
  const creds = presentedCredentials(c.get("parsed"));
  const link = creds.link ?? "";
  const sessions = sessionDoor(c.env);
  const now = c.get("now");
  if (creds.bearer !== null && creds.bearer !== link) {
    // Beside a link as anywhere else, a Bearer that cannot authorize is refused and kept, and
    // so is a second owner token; either is refused before the link is spent.
    const bearer = await sessions.check(creds.bearer, now);
    const refused = !bearer.ok
      ? "auth_bearer_invalid"
      : bearer.session.kind !== "app"
        ? "auth_credential_conflict"
        : null;
    if (refused !== null) {
      await audit(c.env, {
        kind: refused,
        outcome: "refused",
        principal: "anonymous",
        subject: refusalSubject(c.req.method, url.pathname),
        group: `sign-in link ${refused}`,
      });
      throw new GatewayError(refused);
    }
  }
  const opened = await sessions.openLink(
    link,
    clientAddress(c.req.raw, c.env),
    c.req.header("user-agent") ?? null,
    now,
  );
  if (!opened.ok) {
    // A link that signs no one in (used, expired, an app's token, garbage) is kept, per reason.
    await audit(c.env, {
      kind: "sign_in_link_refused",
      outcome: "refused",
      principal: "anonymous",
      subject: refusalSubject(c.req.method, url.pathname),
      detail: { reason: opened.reason },
      group: `sign-in link ${opened.reason}`,
    });
    throw browserRefusal(opened.reason, opened.at);
  }
  await audit(c.env, {
    kind: "session_signed_in",
    outcome: "allowed",
    principal: "owner",
    subject: opened.session.id,
    detail: { kind: "browser", issuer: opened.session.issuer },
  });
  await emitEvent(c.env, "session.signed_in", { session: opened.session.id });
  for (const evicted of opened.evicted ?? []) {
    await audit(c.env, {
      kind: "session_signed_out",
      outcome: "info",
      principal: "gateway",
      subject: evicted.id,
      detail: { reason: "limit", kind: evicted.kind, issuer: evicted.issuer },
    });
    await emitEvent(c.env, "session.signed_out", { session: evicted.id, reason: "limit" });
  }
  url.searchParams.delete("token");
  const maxAge = Math.floor(Math.min(browserSessionTtlMs(c.env), opened.session.expiresAt - now) / 1000);
  const headers = new Headers({
    Location: url.pathname + url.search,
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
  });
  for (const cookie of sessionCookieHeaders(c.env.GATEWAY_PORT, opened.browserToken, maxAge))
    headers.append("Set-Cookie", cookie);
  return new Response(null, { status: 302, headers });
}
