// An app backend's door (127.0.0.1:<gateway port> inside its sandbox, relayed to the gateway's
// backends socket) is the app's, whatever the auth mode: with PERSONALCLAW_AUTH_MODE=none the
// owner's loopback needs no credential, but a request through the door is the app's (with its
// token) or nobody's, and an owner credential carried through it is refused and kept.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot, removeHome, runCli, startGateway, type RunningGateway } from "./helpers/gateway";

const doorCaller = join(repoRoot, "test", "fixtures", "backend-apps", "door-caller");

interface DoorAsk {
  method: string;
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
  token?: boolean;
}

async function throughDoor(gw: RunningGateway, ask: DoorAsk): Promise<{ status: number; code: string | null }> {
  const response = await gw.fetch("/apps/door-caller/api/call", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ gateway: gw.port, ...ask }),
  });
  expect(response.status).toBe(200);
  return response.json();
}

const OWNER_ONLY: Array<[string, string, unknown?]> = [
  ["GET", "/api/security/events"],
  ["GET", "/api/security/events/verify"],
  ["GET", "/api/auth/sessions"],
  ["POST", "/api/auth/signout-everywhere", {}],
  ["GET", "/api/secrets"],
  ["PUT", "/api/secrets/STOLEN", { value: "x" }],
  ["GET", "/api/apps"],
  ["POST", "/api/apps/door-caller/disable", {}],
  ["GET", "/api/token/local"],
  ["GET", "/api/config/personalclaw"],
];

describe("an app backend's door with PERSONALCLAW_AUTH_MODE=none", () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway({
      home: mkdtempSync("/var/tmp/pc-door-home-"),
      env: { PERSONALCLAW_AUTH_MODE: "none" },
    });
    const result = await runCli(["apps", "install", doorCaller, "--yes", "--json", "--home", gw.home]);
    expect(result.code, result.stderr + result.stdout).toBe(0);
    for (let i = 0; i < 150; i++) {
      const row = await (await gw.fetch("/api/apps/door-caller", { owner: false })).json();
      if (row.backend?.healthy) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error("door-caller's backend did not become healthy");
  }, 120_000);
  afterAll(async () => {
    await gw.stop();
    removeHome(gw.home);
  });

  it("the owner's loopback still needs no credential", async () => {
    expect((await gw.fetch("/api/security/events", { owner: false })).status).toBe(200);
  });

  it("a request through the door without a credential is nobody's: every owner-only route refuses it", async () => {
    for (const [method, path, body] of OWNER_ONLY) {
      const answer = await throughDoor(gw, { method, path, body });
      expect(answer, `${method} ${path}`).toEqual({ status: 403, code: "session_required" });
    }
  });

  it("with its app token the door is the app's: its declared route answers, owner-only routes refuse it", async () => {
    expect(await throughDoor(gw, { method: "GET", path: "/api/status", token: true })).toEqual({
      status: 200,
      code: null,
    });
    for (const [method, path, body] of OWNER_ONLY) {
      const answer = await throughDoor(gw, { method, path, body, token: true });
      expect(answer, `${method} ${path}`).toEqual({ status: 403, code: "app_not_permitted" });
    }
  });

  it("an owner credential carried through the door is refused, and the refusal is a row", async () => {
    const secret = readFileSync(join(gw.home, ".local_secret"), "utf8").trim();
    const carriers: Array<Record<string, string>> = [
      { authorization: `Bearer ${gw.token}` },
      { cookie: `pc_token_${gw.port}=${gw.token}` },
      { "x-internal-secret": secret, "x-personalclaw-work": "bridge" },
      { "x-local-secret": secret },
    ];
    for (const headers of carriers) {
      const answer = await throughDoor(gw, { method: "GET", path: "/api/security/events", headers });
      expect(answer, Object.keys(headers)[0]).toEqual({ status: 403, code: "backend_door_owner_credential" });
    }
    const link = await throughDoor(gw, { method: "GET", path: `/api/status?token=${gw.token}` });
    expect(link).toEqual({ status: 403, code: "backend_door_owner_credential" });
    const rows = (await (
      await gw.fetch("/api/security/events?kind=backend_door_owner_credential&limit=50", { owner: false })
    ).json()) as { events: Array<{ outcome: string; principal: string }> };
    expect(rows.events.length).toBeGreaterThan(0);
    expect(rows.events.every((row) => row.outcome === "refused" && row.principal === "anonymous")).toBe(true);
  });
});
