// What every forwarded request owes the backend it reaches, whoever asked for it: the client's
// headers less credentials and hop-by-hop ones (forward-headers.ts), the app's own token and
// name, the signature over exactly the target and body sent (proxy-signature.ts), the hop
// count, and a wait bounded up to the answer's start (PROXY: a hung or SIGSTOPped backend must
// not hold a request forever; a streamed body may then take as long as it takes).
import { GatewayError } from "../../kernel/contracts/errors";
import { PROXY_SIGNATURE_HEADER, signProxyRequest, wireTarget } from "../../kernel/crypto/proxy-signature";
import { forwardableRequestHeaders } from "./forward-headers";

/** How a backend is reached: the origin its URLs are built on and the fetch that reaches it. */
export interface BackendTransport {
  origin: string;
  fetch: (url: URL, init: RequestInit) => Promise<Response>;
}

/** The header that tells a backend how many of its own calls through its proxy are in flight, this one included (0: not its own call). */
export const HOP_HEADER = "X-PersonalClaw-Hop";

/** What the gateway sends in the app's name beside the client's request. */
export interface OwedToBackend {
  app: string;
  /** The app's current secret: the signature's key. */
  secret: string;
  /** The app's own token, the only credential the backend is handed. */
  token: string;
  hop: number;
  responseTimeoutMs: number;
}

/** The methods whose requests carry no body: nothing is read from the client or sent on for them. */
export const NO_BODY = new Set(["GET", "HEAD"]);

/**
 * Sets what every request the gateway sends a backend in an app's name carries: the app's own
 * token (the only credential it is handed), the app's name, and the signature over exactly the
 * method, target and body sent, at `now`.
 */
export async function addAppCredentials(
  headers: Headers,
  owed: Pick<OwedToBackend, "app" | "secret" | "token">,
  method: string,
  url: URL,
  body: Uint8Array,
  now: number,
): Promise<void> {
  headers.set("Authorization", `Bearer ${owed.token}`);
  headers.set("X-PersonalClaw-App", owed.app);
  headers.set(
    PROXY_SIGNATURE_HEADER,
    await signProxyRequest({ secret: owed.secret, ts: Math.floor(now / 1000), method, target: wireTarget(url), body }),
  );
}

/**
 * Sends `request`'s method, filtered headers and `body` (the exact bytes that are signed) to
 * `url` and answers the backend's answer as it came. Refused: 504 `app_backend_timeout` when no
 * answer started in time, 503 `app_backend_unavailable` when the backend could not be reached,
 * 502 `bridge_unavailable` when the edge's link to the machine failed.
 */
export async function sendSigned(
  transport: BackendTransport,
  request: Request,
  url: URL,
  body: Uint8Array,
  owed: OwedToBackend,
  now: number,
): Promise<Response> {
  const headers = forwardableRequestHeaders(request.headers);
  await addAppCredentials(headers, owed, request.method, url, body, now);
  headers.set(HOP_HEADER, String(owed.hop));
  const aborter = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    aborter.abort();
  }, owed.responseTimeoutMs);
  try {
    return await transport.fetch(url, {
      method: request.method,
      headers,
      body: NO_BODY.has(request.method) ? undefined : body,
      redirect: "manual",
      signal: aborter.signal,
    });
  } catch (error) {
    if (timedOut)
      throw new GatewayError("app_backend_timeout", {
        vars: { name: owed.app, seconds: owed.responseTimeoutMs / 1000 },
      });
    // At the edge the last hop is the machine's link: its failure is said as such (502 bridge_unavailable).
    if (error instanceof GatewayError) throw error;
    throw new GatewayError("app_backend_unavailable", { vars: { name: owed.app } });
  } finally {
    clearTimeout(timer);
  }
}
