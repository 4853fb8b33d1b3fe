// What the bridge's link does with the edge's calls: a name that is no row of the bridge contract
// never reaches the bridge, and a row is handed to the bridge on loopback with the local
// credential and the work named, its answer carried back whole.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { serveCall, type EdgeLinkOptions } from "./edge-link";

let server: Server;
const seen: Array<{ method: string; url: string; headers: IncomingHttpHeaders; body: string }> = [];
let options: EdgeLinkOptions;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ secrets: [] }));
    });
  });
  await new Promise<void>((resolvePromise) => server.listen(0, "127.0.0.1", resolvePromise));
  const { port } = server.address() as { port: number };
  options = {
    record: { origin: "https://claw.example", machine: "0".repeat(32), paired_at: "", private_key: "" },
    bridgeUrl: `http://127.0.0.1:${port}`,
    secret: "local-secret",
    dispatcher: undefined,
    log: () => undefined,
  };
});

afterAll(() => server.close());

describe("the link serves the bridge contract's rows only", () => {
  it.each(["POST /anything", "GET /../secrets/list", "__proto__", "constructor", "POST /secrets/list "])(
    "a call named %j is refused 404 and never reaches the bridge",
    async (operation) => {
      const before = seen.length;
      const answer = await serveCall(options, { type: "call", id: 1, operation, body: null });
      expect(answer).toMatchObject({ type: "answer", id: 1, status: 404 });
      expect(seen.length).toBe(before);
    },
  );

  it("a row is handed to the bridge with the local credential and the work named, and its answer comes back", async () => {
    const answer = await serveCall(options, { type: "call", id: 7, operation: "POST /secrets/list", body: "{}" });
    expect(answer).toEqual({ type: "answer", id: 7, status: 200, body: { text: JSON.stringify({ secrets: [] }) } });
    expect(seen.at(-1)).toMatchObject({
      method: "POST",
      url: "/secrets/list",
      body: "{}",
      headers: { "x-internal-secret": "local-secret", "x-personalclaw-work": "edge" },
    });
  });
});
