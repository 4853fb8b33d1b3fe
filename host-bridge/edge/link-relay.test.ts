// What the machine does with the edge's relays: a backend's request goes to the named app's own
// endpoint as it came and its answer comes back whole or is refused over the bound; a file read
// stays inside the app's installed copy whatever the path or a link inside it says.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MAX_RELAY_BODY_BYTES, type RelayRequest } from "../../kernel/contracts/bridge-link";
import { serveRelay, type RelayPlaces } from "./link-relay";

let server: Server;
let port = 0;
let root: string;
const seen: Array<{ method: string; url: string; headers: IncomingHttpHeaders; body: string }> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      if (req.url === "/big") return res.writeHead(200).end(Buffer.alloc(MAX_RELAY_BODY_BYTES + 1));
      res.writeHead(201, { "Content-Type": "application/json", "Set-Cookie": "a=1" }).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolvePromise) => server.listen(0, "127.0.0.1", resolvePromise));
  port = (server.address() as { port: number }).port;
  root = mkdtempSync(join(tmpdir(), "pc-relay-"));
  mkdirSync(join(root, "apps", "notes", "ui"), { recursive: true });
  mkdirSync(join(root, "apps", "other"), { recursive: true });
  writeFileSync(join(root, "apps", "notes", "ui", "index.html"), "<p>notes</p>");
  writeFileSync(join(root, "apps", "other", "secret.txt"), "another app's file");
  writeFileSync(join(root, "outside.txt"), "not an app's");
  symlinkSync(join(root, "outside.txt"), join(root, "apps", "notes", "ui", "escape.html"));
});

afterAll(() => {
  server.close();
  rmSync(root, { recursive: true, force: true });
});

const places = (): RelayPlaces => ({
  endpointOf: (app) => (app === "notes" ? { port } : null),
  appsDir: join(root, "apps"),
});

const backend = (over: Partial<RelayRequest> = {}): RelayRequest => ({
  app: "notes",
  to: "backend",
  method: "POST",
  target: "/api/notes?x=1",
  headers: [
    ["X-PersonalClaw-Proxy", "t=1,v1=abc"],
    ["Connection", "close, X-PersonalClaw-Proxy"],
  ],
  body: Buffer.from('{"text":"hi"}').toString("base64"),
  ...over,
});

const file = (target: string): RelayRequest => ({
  app: "notes",
  to: "app_file",
  method: "GET",
  target,
  headers: [],
  body: null,
});

describe("a relay to an app's backend", () => {
  it("reaches the named app's endpoint with the signed request as it came, and carries the answer back whole", async () => {
    seen.length = 0;
    const answer = await serveRelay(places(), backend());
    expect(answer.refused).toBeUndefined();
    expect(answer.status).toBe(201);
    expect(Buffer.from(answer.body, "base64").toString()).toBe('{"ok":true}');
    expect(answer.headers).toContainEqual(["Set-Cookie", "a=1"]);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: "POST", url: "/api/notes?x=1", body: '{"text":"hi"}' });
    // A hop-by-hop header from the edge cannot make the machine drop the signature on the way.
    expect(seen[0]!.headers["x-personalclaw-proxy"]).toBe("t=1,v1=abc");
  });

  it("an app with no running backend is refused app_backend_unavailable, and nothing is sent anywhere", async () => {
    seen.length = 0;
    const answer = await serveRelay(places(), backend({ app: "other" }));
    expect([answer.status, answer.refused]).toEqual([503, "app_backend_unavailable"]);
    expect(seen).toHaveLength(0);
  });

  it("an answer over the bound is refused app_answer_too_large, never cut short", async () => {
    const answer = await serveRelay(places(), backend({ method: "GET", target: "/big", body: null }));
    expect([answer.status, answer.refused, answer.body]).toEqual([502, "app_answer_too_large", ""]);
  });
});

describe("a relay for an app's file", () => {
  it("reads a file of the app's installed copy", async () => {
    const answer = await serveRelay(places(), file("ui/index.html"));
    expect([answer.status, Buffer.from(answer.body, "base64").toString()]).toEqual([200, "<p>notes</p>"]);
  });

  it.each([
    ["a dot-dot segment", "../other/secret.txt"],
    ["an encoded dot-dot segment", "%2e%2e/other/secret.txt"],
    ["an encoded slash", "ui%2f..%2f..%2fother%2fsecret.txt"],
    ["an absolute path", "/etc/passwd"],
    ["a link that leaves the app", "ui/escape.html"],
    ["a folder", "ui"],
    ["a missing file", "ui/none.html"],
  ])("refuses %s as app_ui_not_found", async (_, target) => {
    const answer = await serveRelay(places(), file(target));
    expect([answer.status, answer.refused, answer.body]).toEqual([404, "app_ui_not_found", ""]);
  });
});
