// The environment every child the bridge starts for an app begins from: an allowlist, never an
// inheritance. Threat: the bridge's own environment holds the owner's credentials (cloud keys,
// agent sockets, tokens seeded from ~/.personalclaw/.env); a copy of it would hand every one of
// them to third-party code (BACK-10, SBX-01..03).
import { EGRESS_PROXY_PORT, INSIDE_DIR } from "./mount-plan";

export type ChildKind = "backend" | "hook" | "installer" | "mcp";

export interface ChildEnvOptions {
  kind: ChildKind;
  app: {
    name: string;
    hasStorage: boolean;
    dataDir: string;
    /** The proxy-signature secret; set for a backend, absent for a hook or an installer. */
    secret?: string;
    /** The loopback port a backend listens on. */
    port?: number;
    /** Secrets the owner assigned to the app, opened for this start (backend only): name → value. */
    secrets?: Readonly<Record<string, string>>;
  };
  /** PERSONALCLAW_HOME of this gateway. */
  home: string;
  workspace?: string;
  gatewayPort?: number;
  /** Names the operator declared in sandbox.env_passthrough (config.json only, never a manifest). */
  passthrough: readonly string[];
  /** Debug log for withheld names and removed logins. Names only, never values. */
  log?: (msg: string) => void;
  /** Sandboxed, HOME and TMPDIR are the child's private /tmp: the owner's home is not in its view. */
  sandboxed?: boolean;
}

export interface ChildEnv {
  env: Record<string, string>;
  /** Parent names that did not reach the child, sorted. */
  withheld: string[];
  /** Inherited names whose value lost a `user:pass@` login. */
  loginsRemoved: string[];
}

/**
 * The variables that send a child's HTTP clients through its egress relay: curl, pip, npm,
 * requests and urllib read the proxy variables; Node's http, https and fetch are routed by the
 * preload NODE_OPTIONS names (inside/node-egress.cjs).
 */
export function egressEnvironment(): Record<string, string> {
  const proxy = `http://127.0.0.1:${EGRESS_PROXY_PORT}`;
  return {
    HTTP_PROXY: proxy,
    HTTPS_PROXY: proxy,
    http_proxy: proxy,
    https_proxy: proxy,
    NO_PROXY: "localhost,127.0.0.1",
    no_proxy: "localhost,127.0.0.1",
    NODE_OPTIONS: `--require ${INSIDE_DIR}/lib/node-egress.cjs`,
  };
}

/** One variable of a child's environment and why it is there: the author guide's list is rendered from these. */
export interface ChildVariable {
  name: string;
  why: string;
}

/** Exact names every child may inherit from the bridge's environment (BACK-10 CHILD_ENV_BASE_NAMES). */
export const INHERITED_NAMES: readonly ChildVariable[] = [
  { name: "PATH", why: "where programs are found" },
  { name: "HOME", why: "replaced by `/tmp` in the sandbox" },
  { name: "TMPDIR", why: "replaced by `/tmp` in the sandbox" },
  { name: "LANG", why: "locale" },
  { name: "LANGUAGE", why: "locale" },
  { name: "TZ", why: "time zone" },
  { name: "SSL_CERT_FILE", why: "the certificate store, when the owner's system moved it" },
  { name: "SSL_CERT_DIR", why: "the certificate store, when the owner's system moved it" },
  { name: "NODE_EXTRA_CA_CERTS", why: "extra certificate authorities for Node" },
  { name: "REQUESTS_CA_BUNDLE", why: "the certificate store for Python's requests" },
  { name: "CURL_CA_BUNDLE", why: "the certificate store for curl" },
  { name: "GIT_SSL_CAINFO", why: "the certificate store for git" },
  { name: "GIT_SSL_CAPATH", why: "the certificate store for git" },
  { name: "PYTHONPATH", why: "extra Python module folders" },
  { name: "PYTHONPYCACHEPREFIX", why: "where Python writes its bytecode cache" },
];

/** The gateway's own names: set by the bridge, and inherited from its environment when it sets none. */
const GATEWAY_NAMES = ["PERSONALCLAW_HOME", "PERSONALCLAW_WORKSPACE", "PERSONALCLAW_PORT"];

/** Name families every child may inherit, matched by prefix. */
export const INHERITED_PREFIXES: readonly ChildVariable[] = [
  { name: "XDG_*", why: "desktop folder and runtime settings" },
  { name: "LC_*", why: "locale" },
];

/** What the bridge sets for a backend on top of the inherited names (app-author guide, "The backend"). */
export const SET_FOR_BACKEND: readonly ChildVariable[] = [
  {
    name: "PORT",
    why: "listen on 127.0.0.1:$PORT (8080 in the app's own network namespace; the gateway reaches it through a socket)",
  },
  {
    name: "PERSONALCLAW_GATEWAY_URL",
    why: "the gateway as the app calls it back, `http://127.0.0.1:$PERSONALCLAW_PORT`, with the app token a request carried",
  },
  {
    name: "PERSONALCLAW_PORT",
    why: "the gateway's port, reachable at 127.0.0.1 from inside through the sandbox's relay",
  },
  { name: "PERSONALCLAW_HOME", why: "the gateway's state folder: a host path, which the sandbox does not show" },
  { name: "PERSONALCLAW_WORKSPACE", why: "the owner's workspace folder, when one is configured" },
  { name: "PERSONALCLAW_APP_NAME", why: "the app's name" },
  {
    name: "PERSONALCLAW_APP_SECRET",
    why: "the key the proxy signature is checked with (the SDKs read it); masked in logs",
  },
  {
    name: "PERSONALCLAW_APP_DATA_DIR",
    why: "the writable data/ folder, only when the app declares `permissions.storage`",
  },
  {
    name: "HTTP_PROXY, HTTPS_PROXY, NO_PROXY (and lower case), NODE_OPTIONS",
    why: "only when the app declares `permissions.network` hosts: its egress relay, and Node's preload that routes `http`, `https` and `fetch` through it",
  },
  {
    name: "PERSONALCLAW_FOLDER_<NEED>",
    why: "for each need in `permissions.folders` the owner granted a folder to (the name upper-cased, `-` as `_`): `/folders/<need>`, where that folder appears, read-only unless granted read-write; the app's MCP servers get it too",
  },
  {
    name: "each assigned secret",
    why: "under the name the manifest's `secrets` declared, once the owner assigned one: its value, or for a secret with `use` a placeholder (new at every start) that the egress broker replaces on the way to the declared origins",
  },
  {
    name: "PERSONALCLAW_ORIGIN_<NAME>",
    why: "for each assigned secret delivered as a placeholder: the `http://` base URL of its first origin (`http://api.example.com` for `https://api.example.com`, a port other than 443 kept); send the placeholder there, the broker opens the TLS connection",
  },
];

const BASE_NAMES = new Set([...INHERITED_NAMES.map((v) => v.name), ...GATEWAY_NAMES]);

/** Proxy settings, matched in any case (curl reads lower case, most others upper). */
export const PROXY_NAMES: ReadonlySet<string> = new Set([
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "all_proxy",
  "ftp_proxy",
]);

const BASE_PREFIXES = INHERITED_PREFIXES.map((v) => v.name.slice(0, -1));

function isBaseName(name: string): boolean {
  return (
    BASE_NAMES.has(name) ||
    PROXY_NAMES.has(name.toLowerCase()) ||
    BASE_PREFIXES.some((prefix) => name.startsWith(prefix))
  );
}

/**
 * The floor no declaration passes (SBX-02): cloud session keys, the SSH agent, the GnuPG home
 * and a password program. Matched in any case so `aws_secret_access_key` is caught too.
 */
export function isFloorName(name: string): boolean {
  const upper = name.toUpperCase();
  return (
    upper.startsWith("AWS_SECRET") ||
    upper.startsWith("AWS_SESSION") ||
    upper === "SSH_AUTH_SOCK" ||
    upper === "GNUPGHOME" ||
    upper === "GIT_ASKPASS"
  );
}

/**
 * Installer settings that would move where an install lands or whose cache it writes, so an
 * app's pip/npm cannot be steered outside the app folder or into a cache the owner's own
 * installs read later. The integrator gives the installer a per-app cache instead.
 */
const INSTALLER_LOCATION_KEYS = new Set([
  "pip_target",
  "pip_prefix",
  "pip_root",
  "pip_user",
  "pip_src",
  "pip_cache_dir",
  "pip_install_option",
  "pip_global_option",
  "npm_config_prefix",
  "npm_config_global",
  "npm_config_location",
  "npm_config_cache",
  "npm_config_userconfig",
  "npm_config_globalconfig",
]);

function isInstallerName(name: string): boolean {
  const lower = name.toLowerCase();
  if (!lower.startsWith("pip_") && !lower.startsWith("npm_config_")) return false;
  if (INSTALLER_LOCATION_KEYS.has(lower)) return false;
  // npm login keys: _auth, _authToken, //registry/:_authToken, _password.
  if (lower.includes("_auth") || lower.includes("_password")) return false;
  return true;
}

const LOGIN_IN_URL = /^([a-z][a-z0-9+.-]*:\/\/)[^/?#@\s]*@/i;

/** `http://ada:pw@proxy:3128` -> `http://proxy:3128`; other values unchanged. */
export function removeUrlLogin(value: string): string {
  return value.replace(LOGIN_IN_URL, "$1");
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Builds a child's environment from the allowlist, the operator's passthrough and the app's own variables. */
export function buildChildEnv(
  parentEnv: Readonly<Record<string, string | undefined>>,
  opts: ChildEnvOptions,
): ChildEnv {
  for (const name of opts.passthrough) {
    if (!ENV_NAME.test(name))
      throw new TypeError(`sandbox.env_passthrough holds a name that is not a variable name: ${JSON.stringify(name)}`);
  }
  const declared = new Set(opts.passthrough.filter((name) => !isFloorName(name)));
  const env: Record<string, string> = {};
  const withheld: string[] = [];
  const loginsRemoved: string[] = [];

  for (const [name, value] of Object.entries(parentEnv)) {
    if (value === undefined) continue;
    if (isFloorName(name)) {
      withheld.push(name);
      continue;
    }
    if (declared.has(name)) {
      env[name] = value; // an operator-declared name arrives as it is (SBX-03)
      continue;
    }
    if (isBaseName(name) || (opts.kind === "installer" && isInstallerName(name))) {
      const cleaned = removeUrlLogin(value);
      if (cleaned !== value) loginsRemoved.push(name);
      env[name] = cleaned;
      continue;
    }
    withheld.push(name);
  }

  if (opts.sandboxed) {
    env.HOME = "/tmp";
    env.TMPDIR = "/tmp";
    // The host's proxy is not in the child's network namespace; its way out is its own broker.
    for (const name of Object.keys(env)) if (PROXY_NAMES.has(name.toLowerCase())) delete env[name];
  }
  env.PERSONALCLAW_HOME = opts.home;
  if (opts.workspace !== undefined) env.PERSONALCLAW_WORKSPACE = opts.workspace;
  if (opts.gatewayPort !== undefined) {
    env.PERSONALCLAW_PORT = String(opts.gatewayPort);
    // Inside the sandbox the gateway is at this address through the child's gateway relay.
    env.PERSONALCLAW_GATEWAY_URL = `http://127.0.0.1:${opts.gatewayPort}`;
  }
  if (opts.app.port !== undefined) env.PORT = String(opts.app.port);
  env.PERSONALCLAW_APP_NAME = opts.app.name;
  if (opts.app.secret !== undefined) env.PERSONALCLAW_APP_SECRET = opts.app.secret;
  else delete env.PERSONALCLAW_APP_SECRET;
  // The storage gate is applied after every layer, so declaring the name in passthrough cannot
  // hand a storage-less app a data folder.
  if (opts.app.hasStorage) env.PERSONALCLAW_APP_DATA_DIR = opts.app.dataDir;
  else delete env.PERSONALCLAW_APP_DATA_DIR;

  // Last, and never over a name set above: a declared name is checked at preview, this is the backstop.
  for (const [name, value] of Object.entries(opts.app.secrets ?? {})) {
    if (!ENV_NAME.test(name) || name in env) {
      opts.log?.(`app ${opts.app.name} ${opts.kind}: the secret ${name} was not set: the name is taken`);
      continue;
    }
    env[name] = value;
  }

  withheld.sort();
  const site = `app ${opts.app.name} ${opts.kind}`;
  if (withheld.length > 0)
    opts.log?.(`${site}: withheld ${withheld.length} variable(s) from the child: ${withheld.join(", ")}`);
  if (loginsRemoved.length > 0) opts.log?.(`${site}: removed a login from the value of ${loginsRemoved.join(", ")}`);
  return { env, withheld, loginsRemoved };
}

/**
 * Names the bridge sets itself whose values are a port, a name or a folder, not credentials.
 * PERSONALCLAW_APP_SECRET is absent on purpose: it is the credential a log must never show.
 */
const SET_BY_BRIDGE_NOT_CREDENTIAL = new Set([
  "PORT",
  "PERSONALCLAW_GATEWAY_URL",
  "PERSONALCLAW_APP_NAME",
  "PERSONALCLAW_APP_DATA_DIR",
]);

/** Names whose values are locations or settings, not credentials: the inherited base names and the bridge's own. */
function isNotCredentialName(name: string): boolean {
  return isBaseName(name) || SET_BY_BRIDGE_NOT_CREDENTIAL.has(name);
}

/**
 * The values a child's log is masked by (BACK-05): everything the operator passed through and
 * the app secret. Values shorter than 8 characters are left out: masking `1` or `true` would
 * shred every line without hiding anything worth hiding.
 */
export function credentialValuesOf(env: Readonly<Record<string, string>>): string[] {
  const values = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (isNotCredentialName(name)) continue;
    if (value.length >= 8) values.add(value);
  }
  return [...values].sort((a, b) => b.length - a.length);
}
