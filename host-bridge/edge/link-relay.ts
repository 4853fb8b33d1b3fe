// The machine's side of edge mode's way to an app (workers/proxy/link-relay.ts): a relay the edge
// sends over the link is delivered here, to the named app's running backend (its slot's socket
// or its loopback port, found by the app's name, never by an address the edge names) or to one
// file of the app's installed copy. The edge signed the backend's request; it goes on as it came.
// Bodies are read whole up to MAX_RELAY_BODY_BYTES; a larger answer is refused, not cut.
import http from "node:http";
import { open, realpath } from "node:fs/promises";
import { join, sep } from "node:path";
import { MAX_RELAY_BODY_BYTES, type RelayAnswer, type RelayRequest } from "../../kernel/contracts/bridge-link";
import type { HealthEndpoint } from "../supervisor/health-probe";

export interface RelayPlaces {
  /** Where `app`'s backend answers now, or null when it is not running. */
  endpointOf(app: string): HealthEndpoint | null;
  /** The folder holding the installed apps (<home>/apps). */
  appsDir: string;
}

/** How long a backend may take to answer a relayed request whole; the edge's own bound is usually shorter. */
const BACKEND_RELAY_MS = 120_000;

// Hop-by-hop headers of the backend's answer: they described the socket here, not the answer.
const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "content-length"]);

/** Nothing answered: the edge raises `refused` in its own name (a stable code), never as the app's answer. */
function refusal(refused: NonNullable<RelayAnswer["refused"]>): RelayAnswer {
  const status = { app_backend_unavailable: 503, app_answer_too_large: 502, app_ui_not_found: 404 }[refused];
  return { status, headers: [], body: "", refused };
}

/** Delivers one relay and answers what came back; an unreachable target is an answer, never a throw. */
export async function serveRelay(places: RelayPlaces, request: RelayRequest): Promise<RelayAnswer> {
  return request.to === "backend" ? relayToBackend(places, request) : readAppFile(places, request);
}

function relayToBackend(places: RelayPlaces, request: RelayRequest): Promise<RelayAnswer> {
  const unavailable = () => refusal("app_backend_unavailable");
  const endpoint = places.endpointOf(request.app);
  if (endpoint === null || !request.target.startsWith("/")) return Promise.resolve(unavailable());
  const headers: [string, string][] = request.headers.filter(([name]) => !HOP_BY_HOP.has(name.toLowerCase()));
  const body = request.body === null ? null : Buffer.from(request.body, "base64");
  return new Promise((resolvePromise) => {
    let settled = false;
    const done = (answer: RelayAnswer) => {
      if (settled) return;
      settled = true;
      resolvePromise(answer);
    };
    const outgoing = http.request(
      {
        ...("socketPath" in endpoint
          ? { socketPath: endpoint.socketPath }
          : { host: "127.0.0.1", port: endpoint.port }),
        method: request.method,
        path: request.target,
        headers: [
          ...headers.flat(),
          "host",
          "app-backend",
          ...(body === null ? [] : ["content-length", String(body.byteLength)]),
        ],
        timeout: BACKEND_RELAY_MS,
      },
      (incoming) => {
        const chunks: Buffer[] = [];
        let size = 0;
        incoming.on("data", (chunk: Buffer) => {
          size += chunk.byteLength;
          if (size > MAX_RELAY_BODY_BYTES) {
            incoming.destroy();
            outgoing.destroy();
            return done(refusal("app_answer_too_large"));
          }
          chunks.push(chunk);
        });
        incoming.on("end", () => {
          const kept: [string, string][] = [];
          for (let i = 0; i + 1 < incoming.rawHeaders.length; i += 2)
            if (!HOP_BY_HOP.has(incoming.rawHeaders[i]!.toLowerCase()))
              kept.push([incoming.rawHeaders[i]!, incoming.rawHeaders[i + 1]!]);
          done({ status: incoming.statusCode ?? 502, headers: kept, body: Buffer.concat(chunks).toString("base64") });
        });
        incoming.on("error", () => done(unavailable()));
      },
    );
    outgoing.on("timeout", () => outgoing.destroy(new Error("timed out")));
    outgoing.on("error", () => done(unavailable()));
    outgoing.end(body ?? undefined);
  });
}

/**
 * One file of the app's installed copy: a path of plain segments (no dot segment, no empty one)
 * that still resolves inside the app's folder once links are followed. The edge checks the bytes
 * against those listed at install; this only keeps a link from reading outside the app.
 */
async function readAppFile(places: RelayPlaces, request: RelayRequest): Promise<RelayAnswer> {
  const notFound = () => refusal("app_ui_not_found");
  let segments: string[];
  try {
    segments = request.target.split("/").map(decodeURIComponent);
  } catch {
    return notFound();
  }
  if (segments.some((s) => s === "" || s === "." || s === ".." || s.includes("\0") || s.includes(sep)))
    return notFound();
  try {
    const appFolder = await realpath(join(places.appsDir, request.app));
    const file = await realpath(join(appFolder, ...segments));
    if (!file.startsWith(`${appFolder}${sep}`)) return notFound();
    const handle = await open(file, "r");
    try {
      const stat = await handle.stat();
      if (!stat.isFile()) return notFound();
      if (stat.size > MAX_RELAY_BODY_BYTES) return refusal("app_answer_too_large");
      const bytes = await handle.readFile();
      return { status: 200, headers: [], body: bytes.toString("base64") };
    } finally {
      await handle.close();
    }
  } catch {
    return notFound();
  }
}
