// The gateway's forward duties and nothing else, as a bare worker: the product's own
// sendSigned (header rules, the app's token, the signature, the bounded wait) and inertAnswer
// (the answer's header allowlist and sandbox CSP), reaching the backend through the BACKEND
// binding (the same socket slot as the gateway). No routing, no principal, no permission
// check, no registry: what is left between this and the bare pass-through is the price of
// the duties themselves, and between the gateway and this the price of everything else.
import { sendSigned } from "../../workers/proxy/signed-send";
import { inertAnswer, keptLocation } from "../../workers/proxy/backend-answer-headers";

interface DutiesEnv {
  BACKEND: { fetch: (url: URL, init: RequestInit) => Promise<Response> };
  /** The app's .app_secret, as the gateway holds it. */
  SECRET: string;
}

const APP = "node-notes";
const PREFIX = `/apps/${APP}`;
const NO_BODY = new Uint8Array(0);

export default {
  async fetch(request: Request, env: DutiesEnv): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/health") return new Response("ok");
    const transport = {
      origin: "http://app-backend",
      fetch: (u: URL, init: RequestInit) => env.BACKEND.fetch(u, init),
    };
    const backendUrl = new URL(`${transport.origin}${url.pathname.slice(PREFIX.length)}${url.search}`);
    const owed = { app: APP, secret: env.SECRET, token: "bench-token", hop: 0, responseTimeoutMs: 30_000 };
    const answer = await sendSigned(transport, request, backendUrl, NO_BODY, owed, Date.now());
    const location = answer.headers.get("location");
    const kept = location === null ? null : keptLocation(location, url, APP);
    return inertAnswer(answer, kept, request.headers.get("origin"));
  },
};
