// Routes only the test build serves (test/build/worker.ts adds them to the route table): the
// shipped worker has no row for them, so a real gateway answers 404 not_found.
import { eventHub } from "../../durable/instances";
import { z } from "zod";
import { signProxyRequest } from "../../kernel/crypto/proxy-signature";
import { route } from "../../workers/route-row";

export const testRoutes = [
  route({
    method: "POST",
    path: "/api/test/boolean-field",
    family: "status",
    authz: { kind: "owner" },
    internal: false,
    body: z.object({ enabled: z.boolean() }).strict(),
    contract: "Test build only: echoes a strictly parsed boolean switch.",
    answer: { schema: z.strictObject({ enabled: z.boolean() }) },
    refuses: [],
    async handle({ body }) {
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
    contract: "Test build only: the proxy signature header the worker's signer mints for a golden vector.",
    answer: { schema: z.strictObject({ header: z.string() }) },
    refuses: [],
    async handle({ body }) {
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
    contract: "Test build only: a handler that fails, to prove faults answer internal_error.",
    answer: { schema: z.never() },
    refuses: [],
    async handle() {
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
      "Test build only: hands the EventHub one frame of any name, classified or not, so a suite can prove its filter.",
    answer: { schema: z.strictObject({ delivered: z.number().int(), withheld: z.number().int() }) },
    refuses: [],
    async handle({ env, body }) {
      return eventHub(env).publish({ type: body.type, data: body.data });
    },
  }),
];
