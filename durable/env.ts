// Every binding the gateway worker reads, declared once. The CLI's workerd config
// (host-bridge/cli/workerd-config.ts) is what fills them; nothing else reads `env`.
// wrangler.jsonc declares the same worker for Cloudflare and `wrangler types` writes its view of
// these bindings to worker-configuration.d.ts (Cloudflare.Env); the types at the end of this file make the
// build fail when the two disagree. Env stays written by hand: the generated view types each
// Durable Object through the built bundle (untyped JavaScript), carries no doc lines, and cannot
// name the bindings only a local start has.
import type { SecurityLog } from "./security-log/security-log";
import type { SessionStore } from "./session-store/index";
import type { AppRegistry } from "./app-registry/index";
import type { ApprovalStore } from "./approval-store/index";
import type { EventHub } from "./event-hub/index";
import type { BridgeLink } from "./bridge-link/index";

export interface Env {
  /** Durable Object namespace holding sessions, sign-in links and the signing key. */
  SESSIONS: DurableObjectNamespace<SessionStore>;
  /** Durable Object namespace holding installed-app records. */
  APPS: DurableObjectNamespace<AppRegistry>;
  /** Durable Object namespace holding the HMAC-chained security event log. */
  SECURITY_LOG: DurableObjectNamespace<SecurityLog>;
  /** Durable Object namespace holding approvals and the grants scoped answers leave. */
  APPROVALS: DurableObjectNamespace<ApprovalStore>;
  /** Durable Object namespace holding the live-event WebSockets and their scopes. */
  EVENTS: DurableObjectNamespace<EventHub>;
  /** Durable Object namespace holding the links to paired machines' bridges (edge mode). */
  BRIDGE_LINKS: DurableObjectNamespace<BridgeLink>;
  /** This worker's link door: a paired bridge's calls back, delivered by its BridgeLink (workers/guards/link-door.ts). */
  LINK_DOOR: Fetcher;
  /** This worker's backend door: a paired machine's app backends' calls, delivered by its BridgeLink (workers/guards/backend-door.ts). */
  APP_DOOR: Fetcher;
  /** The one-time secret that pairs the first machine with an edge worker (a wrangler secret; empty locally). */
  PERSONALCLAW_PAIRING_SECRET: string;
  /** The dashboard's static files (a workerd disk service over web/). */
  ASSETS: Fetcher;
  /** Installed apps' files, read-only and without dot files (a workerd disk service over <home>/apps). */
  APP_FILES: Fetcher;
  /**
   * The folder of the tool stamp (a workerd disk service over <home>/run/tool-stamp, writable):
   * the AppRegistry rewrites the stamp after each change a tool call's verdict reads. Only a
   * local start binds it (durable/app-registry/tool-stamp.ts).
   */
  TOOL_STAMP?: Fetcher;
  /** The internal credential of this start (contents of <home>/.local_secret). */
  INTERNAL_SECRET: string;
  /** Base URL of the host bridge on loopback, e.g. http://127.0.0.1:41234. */
  BRIDGE_URL: string;
  /** Security log HMAC key, 64 hex characters (contents of <home>/sel_hmac.key). */
  SEL_KEY: string;
  /** The port this gateway serves; names the browser cookie pc_token_<port>. */
  GATEWAY_PORT: string;
  /** The value PERSONALCLAW_AUTH_MODE asked for ("" when unset). */
  AUTH_MODE_REQUESTED: string;
  /** Extra Host names the owner allows, comma separated (PERSONALCLAW_ALLOWED_HOSTS). */
  ALLOWED_HOSTS: string;
  /**
   * The worker's public https:// origin when it runs on Cloudflare (edge mode,
   * workers/guards/public-origin.ts); a local start binds it empty, which keeps edge mode off.
   */
  PERSONALCLAW_PUBLIC_ORIGIN: string;
  /** The package version. */
  VERSION: string;
  /** When this start began, ISO-8601. */
  STARTED_AT: string;
  /** auth.session_ttl of this start in seconds: how long a browser sign-in lasts (config.json, at most 90 days). */
  SESSION_TTL_S: string;
  /** proxy.response_timeout_s of this start: the proxy's wait for apps whose manifest names none. */
  PROXY_TIMEOUT_S: string;
  /** logs.security_retention_days of this start: sealed security-log segments older than this are removed. */
  SEL_RETENTION_DAYS: string;
  /** Confined backends' socket slots (kernel/contracts/backend-slots.ts), each an external service over a UNIX socket. */
  [slot: `APP_SLOT_${number}`]: Fetcher;
}

/** Bindings a local start wires to its own workerd services (a disk, UNIX sockets); the wrangler config has none of them. */
export type LocalOnlyBinding = "APP_FILES" | "TOOL_STAMP" | `APP_SLOT_${number}`;

type Holds<T extends true> = T;
/** Compiles only while Env gives every binding wrangler.jsonc declares a type wrangler's view accepts. */
export type EnvCoversWranglerConfig = Holds<Env extends Cloudflare.Env ? true : false>;
/** Compiles only while every binding of Env but the local-only ones is declared in wrangler.jsonc. */
export type WranglerConfigCoversEnv = Holds<
  [Exclude<keyof Env, keyof Cloudflare.Env | LocalOnlyBinding>] extends [never] ? true : false
>;
