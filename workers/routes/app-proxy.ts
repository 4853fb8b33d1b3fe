// `/apps/<name>/api/*` (the signed reverse proxy, callable by the owner and by the app
// itself only) and `/apps/<name>/...` (the app's UI, served sandboxed: see proxy/sandboxed-ui.ts).
import { GatewayError } from "../../kernel/contracts/errors";
import type { AppRecord } from "../../kernel/contracts/app-record";
import { proxyTargetOf, requireRecord } from "../app-registry";
import { forwardToBackend } from "../proxy/forward";
import { refuseCrossSite, serveUiFile } from "../proxy/ui-files";
import { route, type HttpMethod } from "../route-row";
import { sessions } from "../sessions";
import type { Env } from "../../durable/env";
import { SANDBOXED_UI_PREFLIGHT, readableBySandboxedUi } from "../proxy/sandboxed-ui";
import { SELF_CALL_LIMIT } from "../proxy/self-call-bound";

const PROXY_METHODS: HttpMethod[] = ["GET", "POST", "PUT", "PATCH", "DELETE"];
const OWN_APP = { kind: "app-may", why: "an app reaches its own backend and UI", owns: "name" } as const;

export const appProxyRoutes = [
  ...PROXY_METHODS.map((method) =>
    route({
      method,
      path: "/apps/:name/api/*",
      family: "app-proxy",
      authz: OWN_APP,
      internal: false,
      rawBody: true,
      answer: { streamed: "the backend's own status and body, with only allowlisted headers" },
      refuses: [
        "app_not_found",
        "app_disabled",
        "proxy_path_ambiguous",
        "body_too_large",
        "app_backend_unavailable",
        "app_backend_timeout",
        "app_redirect_refused",
        "app_proxy_loop",
      ],
      contract: `Forwards ${method} to the app's backend at /api/<tail> with the query as sent, the app's token and a signature; 503 app_backend_unavailable while it is not healthy. The answer keeps only allowlisted headers and always carries a sandbox CSP and nosniff; a redirect leaving /apps/<name>/ is 502 app_redirect_refused; past ${SELF_CALL_LIMIT} of the app's own calls through its proxy in flight, 508 app_proxy_loop.`,
      async handle({ c, env, params, principal, now }) {
        try {
          return await forwardToBackend(env, c.req.raw, c.get("parsed").url, params.name, principal, now);
        } catch (error) {
          throw readableBySandboxedUi(error, c.req.header("origin") ?? null);
        }
      },
    }),
  ),
  route({
    method: "OPTIONS",
    path: "/apps/:name/api/*",
    family: "app-proxy",
    authz: {
      kind: "bootstrap",
      why: "a browser's CORS preflight carries no credential; the call that follows must carry the app token",
    },
    internal: false,
    contract:
      "Answers the CORS preflight of an app's sandboxed UI (Origin: null) calling its own backend; any other origin is refused.",
    answer: { streamed: "204 with the CORS preflight headers and no body" },
    refuses: ["origin_not_allowed"],
    async handle({ c }) {
      if (c.req.header("origin") !== "null") throw new GatewayError("origin_not_allowed");
      return new Response(null, { status: 204, headers: SANDBOXED_UI_PREFLIGHT });
    },
  }),
  route({
    method: "GET",
    path: "/apps/:name/",
    family: "app-proxy",
    authz: OWN_APP,
    internal: false,
    contract:
      "The app's UI entry. The owner is redirected to the same URL with the app's token (?app_token=); the page is served sandboxed in an opaque origin, so it never acts with the owner's session, only with that token.",
    answer: {
      streamed: "302 to the same URL with ?app_token= for the owner; the UI entry file for the app's own token",
    },
    refuses: ["app_not_found", "app_disabled", "origin_not_allowed", "app_ui_not_found"],
    async handle({ c, env, params, principal, now }) {
      const record = await enabledRecord(env, params.name);
      // Another site must not navigate the owner into the app (and get a token minted).
      refuseCrossSite(c.req.raw);
      const url = new URL(c.get("parsed").url);
      if (!record.manifest.ui?.entry)
        throw new GatewayError("app_ui_not_found", { vars: { name: record.name, path: url.pathname } });
      if (principal.kind !== "app") {
        const target = await proxyTargetOf(env, record.name);
        url.searchParams.set("app_token", await sessions(env).appToken(record.name, target!.tokenEpoch, now));
        return new Response(null, {
          status: 302,
          headers: {
            Location: url.pathname + url.search,
            "Cache-Control": "no-store",
            "Referrer-Policy": "no-referrer",
          },
        });
      }
      return serveUiFile(env, record, url.pathname, c.req.raw);
    },
  }),
  route({
    method: "GET",
    path: "/apps/:name/*",
    family: "app-proxy",
    authz: {
      kind: "bootstrap",
      why: "a sandboxed UI's own script and style requests carry no credential; only declared UI files are served",
    },
    internal: false,
    contract:
      "The files of the app's declared UI folder, exactly as installed (never its backend code, data/ or anything a link resolves to), no-cache, nosniff, with a content-security policy; 404 app_ui_not_found otherwise, 403 origin_not_allowed for another site's navigation or CORS read.",
    answer: { streamed: "the declared UI file's bytes with its content type" },
    refuses: ["app_not_found", "app_disabled", "origin_not_allowed", "app_ui_not_found"],
    async handle({ c, env, params }) {
      return serveUiFile(env, await enabledRecord(env, params.name), c.get("parsed").url.pathname, c.req.raw);
    },
  }),
];

async function enabledRecord(env: Env, name: string): Promise<AppRecord> {
  const record = await requireRecord(env, name);
  if (!record.enabled) throw new GatewayError("app_disabled", { vars: { name: record.name } });
  return record;
}
