// Edge mode's way to an app (docs/deploy-cloudflare.md): at the edge the worker has no socket slot
// or loopback port of a backend and no disk service over the apps, so the proxy's signed request
// and a UI file's read cross the paired machine's link instead (durable/bridge-link), and the
// bridge there delivers them (host-bridge/edge/link-relay.ts). What is signed, what is refused
// and how an answer is made inert do not change: only the last hop does. Bodies cross whole,
// never streamed, up to MAX_RELAY_BODY_BYTES each way.
import { fromBase64, toBase64 } from "../../kernel/chain/checkpoint";
import { MAX_RELAY_BODY_BYTES, type RelayAnswer, type RelayRequest } from "../../kernel/contracts/bridge-link";
import { GatewayError } from "../../kernel/contracts/errors";
import type { Env } from "../../durable/env";
import { relayOverLink } from "../bridge-client";
import type { BackendTransport } from "./signed-send";

/**
 * How long the edge keeps a relay waiting for the machine at most. The proxy's own bound (the
 * app's response timeout, 504 app_backend_timeout) comes first for a backend; this one ends a
 * relay nobody waits for any more.
 */
const RELAY_LONGEST_MS = 120_000;
/** How long a UI file's read may take over the link. */
const APP_FILE_RELAY_MS = 15_000;

function answerOf(app: string, answer: RelayAnswer): Response {
  if (answer.refused === "app_answer_too_large")
    throw new GatewayError("app_answer_too_large", { vars: { name: app, limit: MAX_RELAY_BODY_BYTES } });
  if (answer.refused === "app_backend_unavailable")
    throw new GatewayError("app_backend_unavailable", { vars: { name: app } });
  // A file the machine does not have: the UI route answers its own 404 for a status that is not ok.
  if (answer.refused === "app_ui_not_found") return new Response(null, { status: 404 });
  const bytes = fromBase64(answer.body);
  if (bytes === null || bytes.byteLength > MAX_RELAY_BODY_BYTES)
    throw new GatewayError("bridge_unavailable", { vars: { reason: "the relayed answer's body is not readable" } });
  const headers = new Headers();
  for (const [name, value] of answer.headers) {
    try {
      headers.append(name, value);
    } catch {
      // a header the Fetch API refuses is dropped, as a local fetch would never have produced it
    }
  }
  const empty = answer.status === 204 || answer.status === 304 || (answer.status >= 100 && answer.status < 200);
  return new Response(empty ? null : bytes, { status: answer.status, headers });
}

/** The transport that reaches `app`'s backend over the link: the request is sent exactly as signed. */
export function linkBackendTransport(env: Env, app: string): BackendTransport {
  return {
    origin: "http://app-backend",
    async fetch(url, init) {
      const body = init.body instanceof Uint8Array && init.body.byteLength > 0 ? toBase64(init.body) : null;
      const request: RelayRequest = {
        app,
        to: "backend",
        method: (init.method ?? "GET") as RelayRequest["method"],
        target: `${url.pathname}${url.search}`,
        headers: [...new Headers(init.headers).entries()],
        body,
      };
      const relayed = relayOverLink(env, request, RELAY_LONGEST_MS);
      const signal = init.signal;
      if (!signal) return answerOf(app, await relayed);
      // The proxy's answer bound aborts the wait; the relay itself ends on its own bound at the edge.
      const aborted = new Promise<never>((_, reject) => {
        if (signal.aborted) reject(signal.reason);
        signal.addEventListener("abort", () => reject(signal.reason), { once: true });
      });
      return answerOf(app, await Promise.race([relayed, aborted]));
    },
  };
}

/** Reads one file of `app`'s installed copy (a path inside its folder, percent-encoded) over the link. */
export async function readAppFileOverLink(env: Env, app: string, encodedPath: string): Promise<Response> {
  const answer = await relayOverLink(
    env,
    { app, to: "app_file", method: "GET", target: encodedPath, headers: [], body: null },
    APP_FILE_RELAY_MS,
  );
  return answerOf(app, answer);
}
