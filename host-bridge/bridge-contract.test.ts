import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { BRIDGE_OPERATIONS } from "../kernel/contracts/bridge-operations";
import { bridgeOperationRegistry, type BridgeHandlers } from "./bridge-contract";
import { BridgeRuntime } from "./bridge-runtime";
import { ensureHome } from "./home";
import { readOwnerConfig } from "./owner-config";
import { GatewayError } from "../kernel/contracts/errors";

describe("the bridge contract", () => {
  let home: string;
  beforeEach(() => (home = mkdtempSync(join(tmpdir(), "pc-bridge-contract-"))));
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  function runtime(): BridgeRuntime {
    const read = readOwnerConfig(home);
    if (!read.ok) throw new Error(read.reason);
    return new BridgeRuntime({
      paths: ensureHome(home),
      runtimeDir: join(home, "run"),
      gatewayPort: 1,
      packageRoot: resolve(__dirname, ".."),
      version: "0.0.0",
      config: read.config,
      parentEnv: { PATH: process.env.PATH },
      skipBackends: true,
      hookTimeoutSeconds: 60,
      log: () => {},
      callGateway: async () => ({ status: 503, body: null }),
    });
  }

  it("the running bridge registers exactly the operations the contract lists", () => {
    expect([...runtime().operations().keys()].sort()).toEqual(Object.keys(BRIDGE_OPERATIONS).sort());
  });

  it("an operation registered without a contract row stops the bridge at its start", () => {
    const handlers = Object.fromEntries(
      Object.keys(BRIDGE_OPERATIONS).map((name) => [name, async () => null]),
    ) as unknown as BridgeHandlers;
    expect(() =>
      bridgeOperationRegistry({ ...handlers, "POST /apps/unlisted": async () => null } as BridgeHandlers),
    ).toThrow(/without a row \["POST \/apps\/unlisted"\]/);
  });

  it("a contract row without a handler stops the bridge at its start", () => {
    const handlers = Object.fromEntries(
      Object.keys(BRIDGE_OPERATIONS)
        .filter((name) => name !== "POST /secrets/put")
        .map((name) => [name, async () => null]),
    ) as unknown as BridgeHandlers;
    expect(() => bridgeOperationRegistry(handlers)).toThrow(/without a handler \["POST \/secrets\/put"\]/);
  });

  it("a request that does not match its row is bad_request and never reaches its handler", async () => {
    let reached = false;
    const handlers = Object.fromEntries(
      Object.keys(BRIDGE_OPERATIONS).map((name) => [
        name,
        async () => {
          reached = true;
          return null;
        },
      ]),
    ) as unknown as BridgeHandlers;
    const stop = bridgeOperationRegistry(handlers).get("POST /backends/stop")!;
    const refused = await stop({
      body: { name: "../etc" },
      work: "gateway",
      caller: new AbortController().signal,
    }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(GatewayError);
    expect((refused as GatewayError).code).toBe("bad_request");
    expect(reached).toBe(false);
    await stop({ body: { name: "hello-app" }, work: "gateway", caller: new AbortController().signal });
    expect(reached).toBe(true);
  });
});
