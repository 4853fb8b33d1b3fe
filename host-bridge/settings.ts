// Every environment variable the Node side reads, declared once with its default and a
// one-line doc. Nothing else reads process.env (children get buildChildEnv's allowlist).
import { homedir } from "node:os";
import { join, resolve } from "node:path";

export interface Settings {
  /** PERSONALCLAW_HOME: where all state lives (default ~/.personalclaw). */
  home: string;
  /** PERSONALCLAW_PORT: the gateway's port (default 10000; 0 picks a free one). */
  port: number;
  /** PERSONALCLAW_AUTH_MODE: local_token (default) or none; anything else is not applied. */
  authModeRequested: string;
  /** PERSONALCLAW_BIND_HOST: the address workerd listens on (default gateway.bind_host in config.json, else 127.0.0.1; `none` forces loopback). */
  bindHost: string;
  /** Whether PERSONALCLAW_BIND_HOST was set (it then wins over config.json). */
  bindHostFromEnv: boolean;
  /** PERSONALCLAW_ALLOWED_HOSTS: extra Host names that name this gateway, comma separated. */
  allowedHosts: string;
  /** PERSONALCLAW_SKIP_APP_BACKENDS=1: start no app backend. */
  skipAppBackends: boolean;
  /** PERSONALCLAW_HOOK_TIMEOUT_S: seconds an install hook may run (default 60, 1..3600); tests shorten it. */
  hookTimeoutSeconds: number;
  /**
   * PERSONALCLAW_SEL_SEED_PASSPHRASE: the owner's passphrase that seals the security log's seed
   * at first start (sel_seed.sealed) and unseals it for `security seed --show`; without it the
   * seed is shown once and kept nowhere. Never written anywhere.
   */
  seedPassphrase: string;
  /** PERSONALCLAW_DEBUG=1: the CLI prints an unexpected failure's stack instead of one sentence. */
  debug: boolean;
  /** npm_command and npm_lifecycle_event, which npm sets: whether the CLI runs under `npx` or `npm start`. */
  npmCommand: string;
  npmLifecycleEvent: string;
  /**
   * PERSONALCLAW_EDGE_CONNECT_TO: host:port at which to reach the paired edge instead of the
   * address its name resolves to (a tunnel, a test); TLS still checks the edge's own name.
   */
  edgeConnectTo: string;
  /** PATH, to tell whether `personalclaw` is on it (the hints the CLI prints use what works). */
  path: string;
}

/** DESIGN.md: onInstall and onUninstall run bounded to 60 s. */
export const DEFAULT_HOOK_TIMEOUT_SECONDS = 60;

/** Reads the settings from an environment (process.env by default). */
export function readSettings(env: Readonly<Record<string, string | undefined>> = process.env): Settings {
  const hookTimeout = Number(env.PERSONALCLAW_HOOK_TIMEOUT_S);
  const port =
    env.PERSONALCLAW_PORT === undefined || env.PERSONALCLAW_PORT === "" ? 10000 : Number(env.PERSONALCLAW_PORT);
  return {
    home: env.PERSONALCLAW_HOME ? resolve(env.PERSONALCLAW_HOME) : defaultHome(),
    port: Number.isInteger(port) && port >= 0 && port < 65536 ? port : 10000,
    authModeRequested: env.PERSONALCLAW_AUTH_MODE ?? "",
    bindHost: env.PERSONALCLAW_BIND_HOST || "127.0.0.1",
    bindHostFromEnv: Boolean(env.PERSONALCLAW_BIND_HOST),
    allowedHosts: env.PERSONALCLAW_ALLOWED_HOSTS ?? "",
    skipAppBackends: env.PERSONALCLAW_SKIP_APP_BACKENDS === "1",
    seedPassphrase: env.PERSONALCLAW_SEL_SEED_PASSPHRASE ?? "",
    debug: env.PERSONALCLAW_DEBUG === "1",
    npmCommand: env.npm_command ?? "",
    npmLifecycleEvent: env.npm_lifecycle_event ?? "",
    path: env.PATH ?? "",
    edgeConnectTo: env.PERSONALCLAW_EDGE_CONNECT_TO ?? "",
    hookTimeoutSeconds:
      Number.isInteger(hookTimeout) && hookTimeout >= 1 && hookTimeout <= 3600
        ? hookTimeout
        : DEFAULT_HOOK_TIMEOUT_SECONDS,
  };
}

/** The home used when neither --home nor PERSONALCLAW_HOME names one. */
export function defaultHome(): string {
  return resolve(join(homedir(), ".personalclaw"));
}

/** The process environment the host bridge hands to buildChildEnv as its parent. */
export function parentEnvironment(): NodeJS.ProcessEnv {
  return process.env;
}
