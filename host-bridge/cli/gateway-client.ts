// The CLI's door to its home's running gateway: loopback only, through node:http directly
// (no environment proxy, no redirect followed), with the internal credential and the
// command named as its work (INT-08).
import { request, type Agent } from "node:http";
import { readFileSync } from "node:fs";
import { homePaths } from "../home";
import { GatewayError } from "../../kernel/contracts/errors";
import { readLiveGateway } from "./gateway-file";
import { z } from "zod";
import { commandHint, homeInProse } from "./invocation";
import { WORK_HEADER } from "../../kernel/contracts/internal-work";

/** An answer as it came. Commands read it through parseAnswer; the ones that do not yet still index it loosely. */
export interface GatewayAnswer {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- start, apps, doctor, security and token still read their answers unparsed
  body: any;
}

/** A 2xx answer whose body matched its route's schema, or the answer to report as a refusal. */
export type ParsedAnswer<T> = { ok: true; status: number; body: T } | { ok: false; answer: GatewayAnswer };

/**
 * Parses a 2xx answer with its route's schema. A refusal is handed back as it came; a 2xx that
 * does not match is `unexpected_answer`, never half-read.
 */
export function parseAnswer<T>(answer: GatewayAnswer, schema: z.ZodType<T>): ParsedAnswer<T> {
  if (answer.status < 200 || answer.status >= 300) return { ok: false, answer };
  const parsed = schema.safeParse(answer.body);
  if (parsed.success) return { ok: true, status: answer.status, body: parsed.data };
  return {
    ok: false,
    answer: {
      status: 502,
      body: { error: { code: "unexpected_answer", message: "The gateway's answer did not match its contract." } },
    },
  };
}

/** No live gateway is recorded for the home (never started, stopped, or its process is gone). */
export class GatewayNotRunning extends Error {
  readonly code: "gateway_not_running" | "gateway_not_answering" = "gateway_not_running";
  constructor(readonly home: string) {
    super(
      new GatewayError("gateway_not_running", {
        vars: { home: homeInProse(home), start: commandHint("start") },
      }).message,
    );
  }
}

/** The recorded gateway is alive but its port does not answer (workerd gone or restarting). */
export class GatewayNotAnswering extends GatewayNotRunning {
  override readonly code = "gateway_not_answering";
  constructor(home: string, port: number, reason: string) {
    super(home);
    this.message = new GatewayError("gateway_not_answering", {
      vars: { home: homeInProse(home), port, reason, stop: commandHint("stop"), start: commandHint("start") },
    }).message;
  }
}

const UNREACHABLE = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "EHOSTUNREACH", "ETIMEDOUT", "ECONNABORTED"]);

// A home whose gateway.json is live but whose .local_secret is gone is not one the CLI can
// speak for: said as "not running" rather than ENOENT.
export function runningGateway(home: string): { port: number; secret: string } {
  const paths = homePaths(home);
  const gateway = readLiveGateway(paths);
  if (!gateway) throw new GatewayNotRunning(home);
  let secret: string;
  try {
    secret = readFileSync(paths.localSecret, "utf8").trim();
  } catch {
    throw new GatewayNotRunning(home);
  }
  return { port: gateway.port, secret };
}

function send(
  home: string,
  port: number,
  method: string,
  path: string,
  headers: Record<string, string | number>,
  body?: unknown,
  agent?: Agent,
): Promise<GatewayAnswer> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolvePromise, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        method,
        path,
        ...(agent ? { agent } : {}),
        headers: {
          Host: `127.0.0.1:${port}`,
          ...(payload === undefined
            ? {}
            : { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(payload) }),
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // Not JSON: hand back the text.
          }
          resolvePromise({ status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== undefined && UNREACHABLE.has(error.code)) {
        reject(new GatewayNotAnswering(home, port, error.code));
      } else reject(error);
    });
    req.end(payload);
  });
}

export interface CallOptions {
  headers?: Record<string, string>;
  /** Presents the local secret as X-Local-Secret: the owner is at this machine. */
  provePresence?: boolean;
  /** A keep-alive agent, for a caller that asks many times (`mcp run`); one connection per call otherwise. */
  agent?: Agent;
}

/** Calls the gateway of `home` as the CLI; throws GatewayNotRunning when none is running there. */
export async function callGateway(
  home: string,
  work: string,
  method: string,
  path: string,
  body?: unknown,
  options: CallOptions = {},
): Promise<GatewayAnswer> {
  const gateway = runningGateway(home);
  return send(
    home,
    gateway.port,
    method,
    path,
    {
      "X-Internal-Secret": gateway.secret,
      [WORK_HEADER]: `cli:${work}`,
      // The local secret proves the owner is at this machine (AUTH-26, C-18).
      ...(options.provePresence ? { "X-Local-Secret": gateway.secret } : {}),
      ...options.headers,
    },
    body,
    options.agent,
  );
}

const MintedTokenSchema = z.object({ token: z.string() });

/**
 * Runs `calls` as the owner at this machine: the internal credential answers no approval, so
 * the CLI proves presence with the local secret, mints a five-minute owner token, calls with
 * it as Bearer (and without the internal credential), and signs that token out afterwards.
 */
export async function asOwnerSession<T>(
  home: string,
  work: string,
  calls: (call: (method: string, path: string, body?: unknown) => Promise<GatewayAnswer>) => Promise<T>,
): Promise<T | GatewayAnswer> {
  const gateway = runningGateway(home);
  const minted = await send(home, gateway.port, "GET", "/api/token/local?ttl=5m", {
    "X-Internal-Secret": gateway.secret,
    [WORK_HEADER]: `cli:${work}`,
    "X-Local-Secret": gateway.secret,
  });
  const token = parseAnswer(minted, MintedTokenSchema);
  if (!token.ok || minted.status !== 200) return minted;
  const bearer = { Authorization: `Bearer ${token.body.token}` };
  try {
    return await calls((method, path, body) => send(home, gateway.port, method, path, bearer, body));
  } finally {
    await send(home, gateway.port, "POST", "/api/auth/logout", bearer, {});
  }
}
