// What each step of a proxied request costs inside workerd by itself, with the product's own
// functions on the inputs the proxy bench sends (the owner's Bearer on a GET without a body,
// the node-notes backend's answer headers). Each step runs in a loop; the isolate's clock
// advances only at I/O, so every loop is closed by a 1 ms wait and that millisecond is taken
// off. GET /?n=20000 answers {step: µs per call}. A loop keeps caches and the JIT warmer than
// a real request does: read the figures as lower bounds and for their proportions.
import { buildGateway } from "../../workers/routes/pipeline";
import { ROUTES } from "../../workers/routes/table";
import { parseRequest } from "../../workers/guards/parsed-request";
import { checkHost, checkOrigin, hostsOf } from "../../workers/guards/host-origin";
import { checkRequestFraming } from "../../workers/guards/request-framing";
import { forwardableRequestHeaders } from "../../workers/proxy/forward-headers";
import { signProxyRequest, wireTarget } from "../../kernel/crypto/proxy-signature";
import { backendAnswerHeaders, inertAnswer } from "../../workers/proxy/backend-answer-headers";

const ENV = { GATEWAY_PORT: "8080", ALLOWED_HOSTS: "" };
const SECRET = "a".repeat(64);
const NO_BODY = new Uint8Array(0);

async function perCall(n: number, step: () => unknown): Promise<number> {
  for (let i = 0; i < Math.min(n, 2000); i++) await step();
  await scheduler.wait(1);
  const started = performance.now();
  for (let i = 0; i < n; i++) await step();
  await scheduler.wait(1);
  return Math.round(((performance.now() - started - 1) * 1000 * 100) / n) / 100;
}

export default {
  async fetch(request: Request): Promise<Response> {
    const n = Math.max(1000, Math.min(200_000, Number(new URL(request.url).searchParams.get("n")) || 20_000));
    const client = new Request("http://127.0.0.1:8080/apps/node-notes/api/echo", {
      headers: { host: "127.0.0.1:8080", authorization: "Bearer s1.abcdef", "user-agent": "autocannon" },
    });
    const parsed = parseRequest(client, ENV.GATEWAY_PORT);
    const backendUrl = new URL("http://app-backend/api/echo");
    const answer = new Response('{"ok":true}', {
      headers: {
        "content-type": "application/json; charset=utf-8",
        "content-length": "11",
        date: "Tue, 01 Dec 2026 12:00:00 GMT",
        connection: "keep-alive",
        "keep-alive": "timeout=5",
      },
    });
    const router = buildGateway(ROUTES).router;
    const steps: Record<string, () => unknown> = {
      "route match (Hono)": () => router.match("GET", "/apps/node-notes/api/echo"),
      "host, origin and framing checks": () => {
        checkHost(client.headers, hostsOf(ENV));
        checkOrigin(client.headers, "GET", hostsOf(ENV), parsed);
        checkRequestFraming(client.headers);
      },
      "the one parse (URL, path rule, Authorization, cookie)": () => parseRequest(client, ENV.GATEWAY_PORT),
      "backend URL": () => new URL("http://app-backend/api/echo"),
      "request headers filtered": () => forwardableRequestHeaders(client.headers),
      "four headers set": () => {
        const headers = new Headers();
        headers.set("Authorization", "Bearer app.token");
        headers.set("X-PersonalClaw-App", "node-notes");
        headers.set("X-PersonalClaw-Proxy", "1:n:s");
        headers.set("X-PersonalClaw-Hop", "0");
      },
      "signature (fresh nonce, HMAC-SHA256)": () =>
        signProxyRequest({
          secret: SECRET,
          ts: 1_790_000_000,
          method: "GET",
          target: wireTarget(backendUrl),
          body: NO_BODY,
        }),
      "bounded wait (AbortController, setTimeout, clearTimeout)": () => {
        const aborter = new AbortController();
        const timer = setTimeout(() => aborter.abort(), 30_000);
        clearTimeout(timer);
      },
      "answer headers (allowlist, inert set)": () => backendAnswerHeaders(answer.headers, null, null),
      "answer re-wrapped (headers and Response)": () => inertAnswer(answer, null, null, null),
    };
    const costs: Record<string, number> = {};
    for (const [name, step] of Object.entries(steps)) costs[name] = await perCall(n, step);
    return Response.json(costs);
  },
};
