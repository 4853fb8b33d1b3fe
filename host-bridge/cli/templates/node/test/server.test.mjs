// Run with `node --test`: the backend answers a request signed the way the gateway signs and
// refuses one that is not signed.
import { createHash, createHmac, randomBytes } from "node:crypto";
import { after, before, test } from "node:test";
import assert from "node:assert/strict";

const SECRET = "a-test-secret";
process.env.PERSONALCLAW_APP_SECRET = SECRET;
const { startServer } = await import("../server.mjs");

let server;
let base;
before(async () => {
  server = await startServer(0);
  base = `http://127.0.0.1:${server.address().port}`;
});
after(() => server.close());

function signature(method, target, body = "") {
  const ts = Math.floor(Date.now() / 1000);
  const nonce = randomBytes(16).toString("hex");
  const bodyHash = createHash("sha256").update(body).digest("hex");
  const mac = createHmac("sha256", SECRET).update(`${ts}:${nonce}:${method}:${target}:${bodyHash}`).digest("hex");
  return `${ts}:${nonce}:${mac}`;
}

test("a signed request is answered", async () => {
  const res = await fetch(`${base}/api/hello`, { headers: { "x-personalclaw-proxy": signature("GET", "/api/hello") } });
  assert.equal(res.status, 200);
  assert.equal((await res.json()).hello, "world");
});

test("an unsigned request is refused", async () => {
  const res = await fetch(`${base}/api/hello`);
  assert.equal(res.status, 401);
});
