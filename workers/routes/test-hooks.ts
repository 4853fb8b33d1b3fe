// Routes that exist only for the end-to-end suite: they answer 404 unless the gateway was
// started with PERSONALCLAW_TEST_HOOKS=1, so a real gateway never exposes them.
import { z } from "zod";
import { GatewayError } from "../contracts/errors";
import type { Env } from "../env";
import { signProxyRequest } from "../contracts/proxy-signature";
import { route } from "./define";
import { eventHub } from "../events";

function requireTestHooks(env: Env, path: string): void {
  if (env.TEST_HOOKS !== "1") throw new GatewayError("not_found", { vars: { method: "POST", path } });
}

export const testHookRoutes = [
  route({
    method: "POST",
    path: "/api/test/boolean-field",
    family: "status",
    authz: { kind: "owner" },
    internal: false,
    body: z.object({ enabled: z.boolean() }).strict(),
    contract: "Test runs only (404 otherwise): echoes a strictly parsed boolean switch.",
    answer: { schema: z.strictObject({ enabled: z.boolean() }) },
    refuses: ["not_found"],
    async handle({ env, body }) {
      requireTestHooks(env, "/api/test/boolean-field");
      return { enabled: body.enabled };
    },
  }),
  route({
    method: "POST",
    path: "/api/test/sign",
    family: "status",
    authz: { kind: "owner" },
    internal: false,
    body: z
      .object({
        secret: z.string().min(1),
        ts: z.number().int(),
        nonce: z.string(),
        method: z.string(),
        target: z.string(),
        body_base64: z.string(),
      })
      .strict(),
    contract:
      "Test runs only (404 otherwise): the proxy signature header the worker's signer mints for a golden vector.",
    answer: { schema: z.strictObject({ header: z.string() }) },
    refuses: ["not_found"],
    async handle({ env, body }) {
      requireTestHooks(env, "/api/test/sign");
      const bytes = Uint8Array.from(atob(body.body_base64), (ch) => ch.charCodeAt(0));
      return {
        header: await signProxyRequest({
          secret: body.secret,
          ts: body.ts,
          nonce: body.nonce,
          method: body.method,
          target: body.target,
          body: bytes,
        }),
      };
    },
  }),
  route({
    method: "POST",
    path: "/api/test/throw",
    family: "status",
    authz: { kind: "owner" },
    internal: false,
    body: z.object({}).strict(),
    contract: "Test runs only (404 otherwise): a handler that fails, to prove faults answer internal_error.",
    answer: { schema: z.never() },
    refuses: ["not_found"],
    async handle({ env }) {
      requireTestHooks(env, "/api/test/throw");
      throw new Error("deliberate failure for the internal_error test");
    },
  }),
  route({
    method: "POST",
    path: "/api/test/events/publish",
    family: "events",
    authz: { kind: "owner" },
    internal: false,
    body: z
      .object({
        type: z.string().max(80),
        data: z.record(z.string(), z.union([z.string().max(200), z.number(), z.boolean(), z.null()])),
      })
      .strict(),
    contract:
      "Test runs only (404 otherwise): hands the EventHub one frame of any name, classified or not, so a suite can prove its filter.",
    answer: { schema: z.strictObject({ delivered: z.number().int(), withheld: z.number().int() }) },
    refuses: ["not_found"],
    async handle({ env, body }) {
      requireTestHooks(env, "/api/test/events/publish");
      return eventHub(env).publish({ type: body.type, data: body.data });
    },
  }),
];
