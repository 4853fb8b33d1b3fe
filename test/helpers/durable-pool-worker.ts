// The worker the durable tier runs in workerd (vitest.config.ts, project "durable"): the gateway's
// Durable Object classes as the product exports them, and SqlScratch, an object that only
// keeps a SQLite store, for code tested over a store of its own (test/helpers/durable-store.ts).
import { DurableObject } from "cloudflare:workers";

export {
  SessionStore,
  AppRegistry,
  SecurityLog,
  ApprovalStore,
  EventHub,
  BridgeLink,
} from "../../workers/durable-objects";

/** A Durable Object with nothing but its storage: a test runs its work inside it. */
export class SqlScratch extends DurableObject {}

export default {
  fetch: () => new Response(null, { status: 404 }),
};

/** wrangler.jsonc binds LINK_DOOR to the worker's linkDoor entrypoint; nothing here calls it. */
export const linkDoor = {
  fetch: () => new Response(null, { status: 404 }),
};

/** wrangler.jsonc binds APP_DOOR to the worker's backendDoor entrypoint; nothing here calls it. */
export const backendDoor = {
  fetch: () => new Response(null, { status: 404 }),
};
