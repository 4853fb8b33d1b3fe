// App messaging (GRANT-10, EVT-04): an app delivers to another app's inbox only when its
// `appMessaging` list names the target (a trailing `*` is a name prefix). `@platform` is a
// reserved sender no app can be.
import { appRegistry } from "../../durable/instances";
import { z } from "zod";
import { GatewayError } from "../../kernel/contracts/errors";
import { appNotFound, grantsOf } from "../app-registry";
import type { Principal } from "../guards/principal";
import { route } from "../route-row";
import { INBOX_LIMITS } from "../../durable/app-registry/limits";
import { APP_NAME_PATTERN } from "../../kernel/rules/app-name";

const MessageBody = z.object({ to: z.string().regex(APP_NAME_PATTERN), body: z.unknown() }).strict();
const InboxAnswer = z.strictObject({
  messages: z.array(z.strictObject({ from: z.string(), body: z.unknown(), sentAt: z.string() })),
});
const MESSAGING = {
  kind: "app-may",
  why: "an app messages the apps its appMessaging names",
  grant: "appMessaging",
} as const;

/** True when a declared target (`name` or `prefix*`) names `to`. */
export function messagingAllows(declared: readonly string[], to: string): boolean {
  return declared.some((entry) => (entry.endsWith("*") ? to.startsWith(entry.slice(0, -1)) : entry === to));
}

function senderApp(principal: Principal, to: string): string {
  if (principal.kind !== "app")
    throw new GatewayError("app_message_not_permitted", { vars: { app: "(not an app)", to } });
  return principal.app;
}

export const messagingRoutes = [
  route({
    method: "POST",
    path: "/api/apps/message",
    family: "messaging",
    authz: MESSAGING,
    internal: false,
    body: MessageBody,
    contract:
      "Delivers {to, body} to another app's inbox when the sender's appMessaging names it; else 403 app_message_not_permitted and a security-log row. A body over 64 KiB as JSON is 413 app_message_too_large; an inbox holding 1000 messages or 4 MiB is 429 app_inbox_full.",
    answer: { schema: z.strictObject({ delivered: z.literal(true) }) },
    refuses: ["app_message_not_permitted", "app_not_found", "app_message_too_large", "app_inbox_full"],
    async handle(req) {
      const from = senderApp(req.principal, req.body.to);
      const registry = appRegistry(req.env);
      const grants = await grantsOf(req.env, from);
      if (!grants?.appMessaging || !messagingAllows(grants.appMessaging, req.body.to)) {
        // `to` is the sender's choice: refusals are counted per sender, not per target it tries.
        await req.audit({
          kind: "app_message_not_permitted",
          outcome: "refused",
          subject: req.body.to,
          detail: { from },
          group: "POST /api/apps/message",
        });
        throw new GatewayError("app_message_not_permitted", { vars: { app: from, to: req.body.to } });
      }
      const delivered = await registry.deliver(
        req.body.to,
        from,
        req.body.body ?? null,
        new Date(req.now).toISOString(),
      );
      if (!delivered.ok) {
        if (delivered.reason === "unknown_app") throw appNotFound(req.body.to);
        if (delivered.reason === "too_large")
          throw new GatewayError("app_message_too_large", { vars: { limit: INBOX_LIMITS.messageBytes } });
        await req.audit({ kind: "app_inbox_full", outcome: "refused", subject: req.body.to, detail: { from } });
        throw new GatewayError("app_inbox_full", {
          vars: { app: req.body.to, reason: `it holds at most ${delivered.detail}` },
        });
      }
      return { delivered: true };
    },
  }),
  route({
    method: "GET",
    path: "/api/apps/message",
    family: "messaging",
    authz: MESSAGING,
    internal: false,
    contract: "Returns and removes every message waiting in the calling app's own inbox.",
    answer: { schema: InboxAnswer },
    refuses: ["app_message_not_permitted"],
    async handle(req) {
      const app = senderApp(req.principal, "(inbox)");
      return { messages: await appRegistry(req.env).drain(app) };
    },
  }),
];
