// The host bridge's internal API: loopback only, and every request must carry this start's
// internal credential. Each operation is one (method, path) entry matched whole (INT-03).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { timingSafeEqual } from "node:crypto";
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { pipeline } from "node:stream/promises";
import type { AddressInfo } from "node:net";
import { GatewayError } from "../kernel/contracts/errors";
import { storageFullReason } from "../kernel/contracts/storage-full";
import { namedWork } from "../kernel/contracts/internal-work";

/** A request as the server received it, before its contract row parses the body. */
export interface ReceivedBridgeRequest {
  body: unknown;
  work: string;
  /** Aborted when the caller went away before its answer was sent (workerd died, or dropped the request). */
  caller: AbortSignal;
}
export type BridgeOperation = (request: ReceivedBridgeRequest) => Promise<unknown>;

const BODY_LIMIT = 1024 * 1024;

/** The bridge's refusals; each is also a security-log row (as the bridge's own work). */
export type BridgeRefusal = "internal_secret_invalid" | "internal_route_refused" | "internal_call_names_no_work";

function sameSecret(presented: string | undefined, secret: string): boolean {
  if (typeof presented !== "string") return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(secret);
  return a.length === b.length && timingSafeEqual(a, b);
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
  res.end(text);
}

/** An operation's answer that is a file's bytes (a backup archive), not JSON; `done` runs once it is sent or the caller left. */
export class StreamedFile {
  constructor(
    readonly path: string,
    readonly contentType: string,
    readonly done: () => Promise<void>,
  ) {}
}

async function streamFile(res: ServerResponse, file: StreamedFile): Promise<void> {
  try {
    const size = (await stat(file.path)).size;
    res.writeHead(200, { "Content-Type": file.contentType, "Content-Length": size });
    // Once the head is sent a failure can only cut the answer short, which the caller sees.
    await pipeline(createReadStream(file.path), res).catch(() => res.destroy());
  } finally {
    await file.done();
  }
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of req) {
    total += (chunk as Buffer).length;
    if (total > BODY_LIMIT) throw new GatewayError("body_too_large", { vars: { limit: BODY_LIMIT } });
    chunks.push(chunk as Buffer);
  }
  if (total === 0) return undefined;
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw new GatewayError("bad_request", { vars: { reason: "the body is not valid JSON" } });
  }
}

/** Starts the bridge's internal API on 127.0.0.1 with an ephemeral port. */
export async function startBridgeServer(
  secret: string,
  operations: Map<string, BridgeOperation>,
  log: (line: string) => void,
  /** `group` is the listed operation the request names, or `unlisted`: never the raw path. */
  onRefused: (code: BridgeRefusal, subject: string, group: string) => void,
): Promise<{ server: Server; port: number }> {
  const server = createServer(async (req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    const refuse = (code: BridgeRefusal) => {
      const named = `${req.method} ${path}`;
      onRefused(code, `${req.method} ${path.slice(0, 200)}`, operations.has(named) ? named : "unlisted");
      send(res, 403, new GatewayError(code, { vars: { method: req.method ?? "", path } }).toEnvelope());
    };
    if (!sameSecret(req.headers["x-internal-secret"] as string | undefined, secret))
      return refuse("internal_secret_invalid");
    const operation = operations.get(`${req.method} ${path}`);
    if (!operation) return refuse("internal_route_refused");
    const work = namedWork((name) => req.headers[name] as string | undefined);
    if (!work) return refuse("internal_call_names_no_work");
    const caller = new AbortController();
    res.once("close", () => {
      if (!res.writableFinished) caller.abort();
    });
    try {
      const answer = await operation({ body: await readBody(req), work, caller: caller.signal });
      if (answer instanceof StreamedFile) return await streamFile(res, answer);
      send(res, 200, answer ?? null);
    } catch (error) {
      const full = error instanceof GatewayError ? null : storageFullReason(error);
      if (error instanceof GatewayError) {
        send(res, error.status, error.toEnvelope());
      } else if (full !== null) {
        log(`bridge operation ${req.method} ${path}: the disk is full (${full})`);
        send(res, 507, new GatewayError("storage_full", { vars: { reason: full } }).toEnvelope());
      } else {
        log(`bridge operation ${req.method} ${path} failed: ${error instanceof Error ? error.stack : String(error)}`);
        send(res, 500, new GatewayError("internal_error").toEnvelope());
      }
    }
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolvePromise) => server.listen(0, "127.0.0.1", resolvePromise));
  return { server, port: (server.address() as AddressInfo).port };
}
