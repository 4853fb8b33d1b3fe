// The gateway's socket for app backends under `start --edge`. Locally workerd listens on it (the
// backends socket, its backendDoor entrypoint); under --edge the apps' gateway is the edge, so the
// bridge listens there instead and sends each call over the machine's link, where the edge hands
// it to the worker's backend door (durable/bridge-link). A backend sees the same address either
// way. A body over MAX_RELAY_BODY_BYTES is refused 413 before anything is sent; a link that is
// down, or closes before the answer, is 502 bridge_unavailable at once.
import http from "node:http";
import { chmodSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { GATEWAY_SOCKET_FOLDER, GATEWAY_SOCKET_NAME } from "../../kernel/contracts/backend-slots";
import { MAX_RELAY_BODY_BYTES, type DoorRequest, type RelayAnswer } from "../../kernel/contracts/bridge-link";
import type { EdgeLink } from "./edge-link";

const DOOR_METHODS = new Set<DoorRequest["method"]>(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "content-length"]);

function envelope(status: number, code: string, message: string): RelayAnswer {
  return {
    status,
    headers: [["content-type", "application/json"]],
    body: Buffer.from(JSON.stringify({ error: { code, message } })).toString("base64"),
  };
}

function reply(res: http.ServerResponse, answer: RelayAnswer): void {
  const body = Buffer.from(answer.body, "base64");
  const headers = answer.headers.filter(([name]) => !HOP_BY_HOP.has(name.toLowerCase()));
  res.writeHead(answer.status, [...headers.flat(), "content-length", String(body.byteLength)]);
  res.end(body);
}

/** Reads the request's body whole, or null once it passes the bound. */
function readBounded(req: http.IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolvePromise) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > MAX_RELAY_BODY_BYTES) {
        resolvePromise(null);
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on("end", () => resolvePromise(Buffer.concat(chunks)));
    req.on("error", () => resolvePromise(null));
  });
}

/** One backend's call, sent over `link` and answered with what the edge's gateway answered. */
async function carry(link: EdgeLink, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const method = req.method as DoorRequest["method"];
  if (!DOOR_METHODS.has(method) || !req.url?.startsWith("/"))
    return reply(res, envelope(404, "not_found", `There is no route ${String(req.method)} ${String(req.url)}.`));
  const body = await readBounded(req);
  if (body === null)
    return reply(
      res,
      envelope(413, "body_too_large", `The request body is larger than the ${MAX_RELAY_BODY_BYTES}-byte limit.`),
    );
  const headers: [string, string][] = [];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2)
    if (!HOP_BY_HOP.has(req.rawHeaders[i]!.toLowerCase())) headers.push([req.rawHeaders[i]!, req.rawHeaders[i + 1]!]);
  const answer = await link.callDoor({
    method,
    target: req.url,
    headers,
    body: body.byteLength === 0 ? null : body.toString("base64"),
  });
  reply(
    res,
    answer ?? envelope(502, "bridge_unavailable", "The host bridge did not answer: the link to the edge is down."),
  );
}

/** Listens on the gateway's socket in `runtimeFolder` and carries every backend's call to the edge; resolves once listening. */
export async function serveAppDoor(runtimeFolder: string, link: EdgeLink): Promise<http.Server> {
  const folder = join(runtimeFolder, GATEWAY_SOCKET_FOLDER);
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const socketPath = join(folder, GATEWAY_SOCKET_NAME);
  rmSync(socketPath, { force: true });
  const server = http.createServer((req, res) => {
    void carry(link, req, res).catch(() => {
      if (!res.headersSent) reply(res, envelope(502, "bridge_unavailable", "The host bridge did not answer."));
    });
  });
  // A long-poll (an approval's ?wait=30) holds its request open; the edge ends it within a minute.
  server.requestTimeout = 0;
  await new Promise<void>((resolvePromise, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => resolvePromise());
  });
  chmodSync(socketPath, 0o600);
  return server;
}
