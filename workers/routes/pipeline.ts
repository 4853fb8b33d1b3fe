// The fixed order every request goes through (DESIGN.md "One request through the worker"):
// host/origin guard -> credential selection -> principal -> route authorization -> app
// permission gate -> handler with parsed input -> audit. Each step is one named module.
import { Hono } from "hono";
import { GatewayError } from "../../kernel/contracts/errors";
import { storageFullReason } from "../../kernel/contracts/storage-full";
import type { Env } from "../../durable/env";
import { audit } from "../../durable/security-log/audit";
import { checkHost, checkOrigin, hostsOf } from "../guards/host-origin";
import { checkRequestFraming } from "../guards/request-framing";
import { parseRequest, presentedCredentials, type ParsedRequest } from "../guards/parsed-request";
import { isGatewayApiPath, rawPathOf } from "../guards/request-path";
import { internalPrincipal } from "../guards/internal-credential";
import { resolvePrincipal } from "../guards/resolve-principal";
import { isBackendDoorRequest, refuseOwnerCarriersAtDoor } from "../guards/backend-door";
import { principalLabel, type Principal } from "../guards/principal";
import { authorizeRoute } from "../guards/route-authz";
import { checkAppPermission } from "../guards/app-permissions";
import { exchangeSignInLink } from "./sign-in-link";
import { readJsonBody, readQuery } from "../read-input";
import { contentTypeOf } from "../content-type";
import type { AnyRouteRow, GatewayContext, GatewayVars } from "../route-row";
import { reservedAppNames } from "./table";
import { refusalGroup, refusalSubject } from "../refusal-group";
import { browserErrorPage, isPageNavigation } from "./browser-error-page";
import { RememberedMatches } from "./remembered-matches";

/** The request's clock: real time, or in the test build the X-Test-Now header's (the injectable clock). */
function clockOf(c: GatewayContext): number {
  if (TEST_BUILD) {
    const injected = c.req.header("x-test-now");
    if (injected !== undefined && /^\d{10,16}$/.test(injected)) return Number(injected);
  }
  return Date.now();
}

// A route without a :param in its path has none; Hono's decoding of them is skipped for it.
const NO_PARAMS: Record<string, string> = Object.freeze({});

async function runRoute(
  c: GatewayContext,
  row: AnyRouteRow,
  takesParams: boolean,
  reserved: ReadonlySet<string>,
): Promise<Response> {
  const env = c.env;
  const parsed = c.get("parsed");
  const now = c.get("now");
  let principal: Principal;
  try {
    principal =
      (await internalPrincipal(c.req.raw, row, env, parsed.path)) ??
      (await resolvePrincipal(env, presentedCredentials(parsed), now, isBackendDoorRequest(c.req.raw)));
  } catch (error) {
    // A try costs the request nothing; a .catch would make a closure and a promise on every one.
    return refusedCredential(c, row, error);
  }
  c.set("principal", principal);
  const params = takesParams ? (c.req.param() as Record<string, string>) : NO_PARAMS;
  let judgeApp: boolean;
  try {
    judgeApp = authorizeRoute(row, principal, parsed.path);
  } catch (error) {
    return refusedSignedOut(c, row, principal, error);
  }
  if (judgeApp) await checkAppPermission(env, row, principal, parsed.url, params, reserved);
  let body: unknown;
  let query: unknown;
  try {
    body = row.body && !row.rawBody ? await readJsonBody(c.req.raw, row.body) : undefined;
    query = row.query ? readQuery(parsed.url, row.query) : undefined;
  } catch (error) {
    return refusedInput(c, row, principal, error);
  }
  const result = await row.handle({
    c,
    env,
    principal,
    params,
    body,
    query,
    now,
    audit: (entry) => audit(env, { principal: principalLabel(principal), ...entry }),
  });
  // The runtime's own JSON answer: the same body and Content-Type as Hono's c.json, with less work.
  return result instanceof Response ? result : Response.json(result);
}

/**
 * A body or query the row cannot read (not JSON, not an object, the wrong Content-Type, too
 * large, a field its schema refuses) is a refusal the security log keeps, counted per route
 * and code like every refusal (refusal-windows.ts): a caller that floods malformed requests
 * is one row and a count, and the owner still sees that someone sent them. Then the same answer.
 */
async function refusedInput(c: GatewayContext, row: AnyRouteRow, principal: Principal, error: unknown): Promise<never> {
  if (error instanceof GatewayError) {
    const path = c.get("parsed").path;
    await audit(c.env, {
      kind: "request_input_refused",
      outcome: "refused",
      principal: principalLabel(principal),
      subject: refusalSubject(c.req.method, path),
      detail: { code: error.code },
      group: refusalGroup(c.req.method, path, [], row, error.code),
    });
  }
  throw error;
}

/**
 * A Bearer (or app token) that cannot authorize, or an owner Bearer sent through an app's
 * door, is a refusal the security log keeps, counted per route (refusal-windows.ts); the token
 * itself is never written. Then the same answer.
 */
async function refusedCredential(c: GatewayContext, row: AnyRouteRow, error: unknown): Promise<never> {
  if (
    error instanceof GatewayError &&
    (error.code === "auth_bearer_invalid" || error.code === "backend_door_owner_credential")
  )
    await keepAnonymousRefusal(c, row, error.code);
  throw error;
}

/** An anonymous refusal of this row's request, kept and counted per route (and the answer's code, when given). */
async function keepAnonymousRefusal(c: GatewayContext, row: AnyRouteRow, kind: string, code?: string): Promise<void> {
  const path = c.get("parsed").path;
  await audit(c.env, {
    kind,
    outcome: "refused",
    principal: "anonymous",
    subject: refusalSubject(c.req.method, path),
    ...(code === undefined ? {} : { detail: { code } }),
    group: refusalGroup(c.req.method, path, [], row, code),
  });
}

/**
 * A request no session stands behind, refused by its row, is a refusal the security log keeps
 * too, counted per route and reason: a session cookie that no longer signs in (expired, signed
 * out, unknown: `auth_cookie_refused`) or no credential at all (`session_required`). The cookie
 * itself is never written. Then the same answer.
 */
async function refusedSignedOut(
  c: GatewayContext,
  row: AnyRouteRow,
  principal: Principal,
  error: unknown,
): Promise<never> {
  if (principal.kind === "anonymous" && error instanceof GatewayError)
    await keepAnonymousRefusal(
      c,
      row,
      principal.refusal === null ? "session_required" : "auth_cookie_refused",
      error.code,
    );
  throw error;
}

// The one place a failure becomes an answer. A browser's own navigation gets a page; only a
// request that passed the edge (this gateway's Host, its Origin, a plain path) can: a refusal
// at the edge answers the bare envelope, so nothing of the dashboard is served to a foreign
// Host or another site's navigation.
function errorResponse(c: GatewayContext, error: GatewayError): Response {
  const parsed = c.get("parsed") as ParsedRequest | undefined;
  if (parsed !== undefined && isPageNavigation(c.req.method, parsed.path, c.req.raw.headers))
    return browserErrorPage(error, c.req.method);
  return c.json(error.toEnvelope(), error.status as 400, error.headers);
}

/**
 * The edge, the first step of every request whatever it routes to (unknown paths included):
 * the clock, Host, the one parse (the path rule refuses an ambiguous path here, before any
 * handler reads it), Origin and framing; a sign-in link is exchanged here, and only then is
 * there an answer. It runs inside the matched handler rather than as a middleware, so a
 * request meets one handler and Hono composes nothing: the router's choice decides only
 * which row's steps follow, and every row's first step is this one.
 */
async function passEdge(c: GatewayContext, rows: ReadonlyArray<AnyRouteRow>): Promise<Response | null> {
  c.set("now", clockOf(c));
  const request = c.req.raw;
  const hosts = hostsOf(c.env);
  let parsed: ParsedRequest;
  try {
    checkHost(request.headers, hosts);
    parsed = parseRequest(request, c.env.GATEWAY_PORT);
    checkOrigin(request.headers, request.method, hosts, parsed);
    checkRequestFraming(request.headers);
    if (isBackendDoorRequest(request)) refuseOwnerCarriersAtDoor(request, parsed);
  } catch (error) {
    if (error instanceof GatewayError) {
      await audit(c.env, {
        kind: error.code === "bad_request" ? "request_framing_refused" : error.code,
        outcome: "refused",
        principal: "anonymous",
        subject: refusalSubject(c.req.method, rawPathOf(c.req.url)),
        detail: { host: c.req.header("host") ?? null, origin: c.req.header("origin") ?? null },
        // The foreign name is the reason; at most 8 per kind get groups of their own (refusal-windows.ts).
        group: refusalGroup(
          c.req.method,
          rawPathOf(c.req.url),
          rows,
          null,
          `host=${(c.req.header("host") ?? "-").slice(0, 64)} origin=${(c.req.header("origin") ?? "-").slice(0, 64)}`,
        ),
      });
    }
    throw error;
  }
  c.set("parsed", parsed);
  return parsed.hasQuery && parsed.url.searchParams.has("token") ? await exchangeSignInLink(c, parsed.url) : null;
}

/** Builds the gateway's Hono app from the route table. */
export function buildGateway(rows: ReadonlyArray<AnyRouteRow>) {
  const app = new Hono<{ Bindings: Env; Variables: GatewayVars }>({ router: new RememberedMatches() });
  const reserved = reservedAppNames(rows);

  for (const row of rows) {
    const takesParams = row.path.includes(":");
    app.on(row.method, row.path, async (c) => (await passEdge(c, rows)) ?? runRoute(c, row, takesParams, reserved));
  }

  app.notFound(async (c) => {
    const exchanged = await passEdge(c, rows);
    if (exchanged) return exchanged;
    const parsed = c.get("parsed");
    const path = parsed.path;
    // The internal credential opens only listed routes; an unknown path is not one of them.
    await internalPrincipal(c.req.raw, null, c.env, path);
    if (c.req.method === "GET" && !isGatewayApiPath(path)) return serveDashboardFile(c, parsed.url);
    throw new GatewayError("not_found", { vars: { method: c.req.method, path } });
  });

  app.onError((error, c) => {
    if (error instanceof GatewayError) return errorResponse(c, error);
    // A Durable Object write that met a full disk is the owner's condition to fix, not a bug.
    const full = storageFullReason(error);
    if (full !== null) {
      console.error("storage_full", c.req.method, new URL(c.req.url).pathname, full);
      return errorResponse(c, new GatewayError("storage_full", { vars: { reason: full } }));
    }
    console.error(
      "internal_error",
      c.req.method,
      new URL(c.req.url).pathname,
      error instanceof Error ? error.stack : String(error),
    );
    return errorResponse(c, new GatewayError("internal_error"));
  });

  return app;
}

// The dashboard shell is static and loads without a principal; it asks the API, which
// answers session_required until the owner opens a sign-in link (AUTH-04).
async function serveDashboardFile(c: GatewayContext, url: URL): Promise<Response> {
  const file = url.pathname === "/" || !/\.[a-z0-9]+$/i.test(url.pathname) ? "/index.html" : url.pathname;
  const response = await c.env.ASSETS.fetch(new Request(`http://assets${file}`));
  if (!response.ok) throw new GatewayError("not_found", { vars: { method: "GET", path: url.pathname } });
  const headers = new Headers(response.headers);
  headers.set("Content-Type", contentTypeOf(file));
  headers.set("Cache-Control", "no-cache");
  headers.set("X-Content-Type-Options", "nosniff");
  headers.set("Referrer-Policy", "no-referrer");
  headers.set(
    "Content-Security-Policy",
    "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; frame-ancestors 'none'",
  );
  return new Response(response.body, { status: 200, headers });
}
