// __APP_NAME__ backend. Every route but GET /health runs only after the vendored SDK verified
// the gateway's X-PersonalClaw-Proxy signature: any local process can reach this port, only
// the gateway can sign. The gateway sets PORT and PERSONALCLAW_APP_SECRET.
import { createServer } from "node:http";
import { pathToFileURL } from "node:url";
import { withSignature } from "./vendor/app-sdk/index.js";

const NAME = "__APP_NAME__";

function send(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

const routes = {
  "GET /health": (req, res) => send(res, 200, { ok: true }),
  // Reached from the owner's browser or an agent as /apps/__APP_NAME__/api/hello.
  "GET /api/hello": (req, res) => send(res, 200, { app: NAME, hello: "world", verified: true }),
};

export function startServer(port) {
  const server = createServer(
    withSignature((req, res) => {
      const path = req.url.split("?")[0];
      const route = routes[`${req.method} ${path}`];
      if (!route) return send(res, 404, { error: { code: "not_found", message: `No route ${req.method} ${path}.` } });
      route(req, res);
    }),
  );
  return new Promise((resolve) => server.listen(port, "127.0.0.1", () => resolve(server)));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const port = Number(process.env.PORT);
  if (!Number.isInteger(port) || port <= 0 || port > 65535) {
    process.stderr.write(`${NAME}: PORT is not set to a port number; the gateway assigns it.\n`);
    process.exit(2);
  }
  const server = await startServer(port);
  process.stdout.write(`${NAME} listening on 127.0.0.1:${port}\n`);
  for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => server.close(() => process.exit(0)));
}
