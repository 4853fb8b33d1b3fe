// Routes that exist only for the end-to-end suite: they answer 404 unless the gateway was
// started with PERSONALCLAW_TEST_HOOKS=1, so a real gateway never exposes them.
import { z } from "zod";
import { GatewayError } from "../contracts/errors";
import type { Env } from "../env";
import { route } from "./define";

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
    async handle({ env, body }) {
      requireTestHooks(env, "/api/test/boolean-field");
      return { enabled: body.enabled };
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
    async handle({ env }) {
      requireTestHooks(env, "/api/test/throw");
      throw new Error("deliberate failure for the internal_error test");
    },
  }),
];
