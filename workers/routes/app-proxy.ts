// `/apps/<name>/api/*` (the signed reverse proxy) and `/apps/<name>/...` (the app's UI):
// callable by the owner and by the app itself only.
import { GatewayError } from "../contracts/errors";
import type { AppRecord } from "../contracts/app-record";
import { appRegistry } from "../app-registry";
import { forwardToBackend } from "../proxy/forward";
import { serveUiFile } from "../proxy/ui-files";
import { route, type HttpMethod } from "./define";

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
      contract: `Forwards ${method} to the app's backend at /api/<tail> with the query as sent, the app's token and a signature; 503 app_backend_unavailable while it is not healthy.`,
      async handle({ c, env, params, now }) {
        return forwardToBackend(env, c.req.raw, params.name, now);
      },
    }),
  ),
  route({
    method: "GET",
    path: "/apps/:name/*",
    family: "app-proxy",
    authz: OWN_APP,
    internal: false,
    contract: "Serves the app's declared UI files (the entry at /apps/<name>/), no-cache, nosniff, with a content-security policy.",
    async handle({ c, env, params }) {
      const record = (await appRegistry(env).record(params.name)) as AppRecord | null;
      if (!record) throw new GatewayError("app_not_found", { vars: { name: params.name.slice(0, 80) } });
      if (!record.enabled) throw new GatewayError("app_disabled", { vars: { name: record.name } });
      return serveUiFile(env, record, new URL(c.req.url).pathname);
    },
  }),
];
