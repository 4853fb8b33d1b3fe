// The PersonalClaw home: created 0700; its secret files are written 0600 and atomically
// (host-bridge/private-file.ts).
import {
  mkdirSync,
  chmodSync,
  readFileSync,
  readdirSync,
  statSync,
  existsSync,
  lstatSync,
  rmSync,
  rmdirSync,
} from "node:fs";
import {
  BACKEND_SLOTS,
  GATEWAY_SOCKET_FOLDER,
  GATEWAY_SOCKET_NAME,
  slotSocketName,
} from "../kernel/contracts/backend-slots";
import { writePrivateFile } from "./private-file";
import { storeFolder } from "./durable-object-stores";
import { freshSeed } from "./sel-seed";
import { firstEpochKey } from "../kernel/chain/epoch-key";
import { createHash, randomBytes } from "node:crypto";
import { basename, dirname, join } from "node:path";
import { tmpdir } from "node:os";

export const homePaths = (home: string) => ({
  home,
  localSecret: join(home, ".local_secret"),
  selKey: join(home, "sel_hmac.key"),
  selAnchor: join(home, "sel_anchor.json"),
  selWitness: join(home, "sel_witness.json"),
  gatewayFile: join(home, "gateway.json"),
  state: join(home, "state"),
  run: join(home, "run"),
  logs: join(home, "logs"),
  apps: join(home, "apps"),
  quarantine: join(home, "apps", ".quarantine"),
  workerdConfig: join(home, "run", "workerd.capnp"),
  /** The folder of the tool stamp the AppRegistry rewrites (kernel/contracts/mcp-tools.ts); a local start's workerd writes it. */
  toolStamp: join(home, "run", "tool-stamp"),
  gatewayLog: join(home, "logs", "gateway.log"),
  /** The MCP server map agents read (docs/mcp-servers.md); app servers are `<app>:<server>` entries. */
  mcpJson: join(home, "mcp.json"),
  /** The edge this machine is paired with and the machine's private key (docs/deploy-cloudflare.md). */
  edge: join(home, "edge.json"),
  /** The anchor of the paired edge's security log, kept on this machine under `start --edge` (sel-anchor.ts). */
  edgeSelAnchor: join(home, "edge_sel_anchor.json"),
});
export type HomePaths = ReturnType<typeof homePaths>;

/**
 * The longest name the bridge makes in its runtime folder: an egress broker's socket
 * (`egress-<12 hex>.sock`); the gateway's socket (`gateway/gateway.sock`) and a slot's
 * (`slot-63.sock`, and its `slot-63.<8 hex>.new` while it is opened) are shorter.
 */
const LONGEST_RUNTIME_ENTRY = "egress-0123456789ab.sock".length;

/** A UNIX socket's path holds at most 107 bytes (sun_path is 108 with its NUL). */
const SOCKET_PATH_BYTES = 107;

/**
 * The bridge's runtime folder for this home: backend slot sockets and egress broker sockets.
 * Short (a UNIX socket path has 108 bytes), bound into a sandbox only as single entries, and
 * the owner's alone. Under $XDG_RUNTIME_DIR (a 0700 folder of the owner's session) when it is
 * set. Without it (servers, SSH, cron), never a public name: a fixed name in /tmp can be made
 * first by any local user, and then every start was refused, the owner unable to remove it
 * from a sticky /tmp. So it is `<home>/run/sockets`, inside the owner's 0700 home, when its
 * sockets' paths fit; otherwise a random name in /tmp recorded in the home
 * (tmpRuntimeDir). Both processes of one home (the gateway and `personalclaw mcp run`) find
 * the same folder. Only $XDG_RUNTIME_DIR's folder can refuse a start, and only when someone
 * with the owner's own rights replaced it.
 */
export function runtimeDir(home: string, xdgRuntimeDir: string | undefined): string {
  if (xdgRuntimeDir && xdgRuntimeDir.startsWith("/") && existsSync(xdgRuntimeDir)) {
    const tag = createHash("sha256").update(home).digest("hex").slice(0, 12);
    const base = join(xdgRuntimeDir, `personalclaw-${tag}`);
    mkdirSync(base, { recursive: true, mode: 0o700 });
    if (!isOwnPrivateFolder(base)) throw new Error(`${base} is not a folder of this user; remove it and start again`);
    return withGatewayFolder(base);
  }
  const inHome = join(homePaths(home).run, "sockets");
  if (fitsSocketPaths(inHome) && makeOwnPrivateFolder(inHome)) return withGatewayFolder(inHome);
  return withGatewayFolder(tmpRuntimeDir(home));
}

/** Whether every socket the bridge makes in `folder` has a path a UNIX socket can bind. */
export function fitsSocketPaths(folder: string): boolean {
  return Buffer.byteLength(folder) + 1 + LONGEST_RUNTIME_ENTRY <= SOCKET_PATH_BYTES;
}

/**
 * The runtime folder of a home whose own path is too long for a socket's: a name in /tmp no
 * other user can predict (96 random bits), recorded in `<home>/run/runtime_folder` so the
 * gateway and `mcp run` meet there. A recorded name that is no longer this user's private
 * folder (removed by a /tmp cleaner and taken, a link, another owner) is never used: a fresh
 * name is drawn and recorded instead, so a squatter never stops a start.
 */
export function tmpRuntimeDir(home: string): string {
  const uid = process.getuid?.() ?? 0;
  const record = join(homePaths(home).run, "runtime_folder");
  const pattern = new RegExp(`^personalclaw-${uid}-[0-9a-f]{24}$`);
  try {
    const recorded = readFileSync(record, "utf8").trim();
    if (dirname(recorded) === tmpdir() && pattern.test(basename(recorded)) && makeOwnPrivateFolder(recorded))
      return recorded;
  } catch {
    // no record yet, or an unreadable one: a fresh name
  }
  for (;;) {
    const fresh = join(tmpdir(), `personalclaw-${uid}-${randomBytes(12).toString("hex")}`);
    try {
      mkdirSync(fresh, { mode: 0o700 }); // not recursive: a name that exists is someone else's
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") continue;
      throw error;
    }
    if (!isOwnPrivateFolder(fresh)) continue;
    mkdirSync(dirname(record), { recursive: true, mode: 0o700 });
    writePrivateFile(record, `${fresh}\n`);
    return fresh;
  }
}

/** Makes `folder` (0700) unless it exists; true when it is then a private folder of this user, never a link. */
function makeOwnPrivateFolder(folder: string): boolean {
  try {
    mkdirSync(folder, { recursive: true, mode: 0o700 });
  } catch {
    return false; // a file or a dangling link at the name
  }
  return isOwnPrivateFolder(folder);
}

/** True when `folder` is a folder (not a link) of this user; a wider mode is tightened to 0700. */
function isOwnPrivateFolder(folder: string): boolean {
  const st = lstatSync(folder, { throwIfNoEntry: false });
  if (!st || !st.isDirectory() || st.uid !== (process.getuid?.() ?? 0)) return false;
  if ((st.mode & 0o077) !== 0) chmodSync(folder, 0o700);
  return true;
}

function withGatewayFolder(base: string): string {
  mkdirSync(join(base, GATEWAY_SOCKET_FOLDER), { recursive: true, mode: 0o700 });
  return base;
}

/**
 * After a clean stop, what the gateway made in its runtime folder goes, and the folder itself
 * when nothing is left in it, so starts of many homes leave nothing behind. Two things keep it:
 * sockets of another process still in use (an agent's `personalclaw mcp` and its egress
 * brokers, or the gateway beside it), and a parent anyone may write to (the random name in
 * /tmp), which stays recorded: the empty folder keeps it this user's, so the next start does
 * not have to draw and record another (one taken meanwhile would only cost that).
 */
export function releaseRuntimeDir(runtime: string): void {
  const folders = [join(runtime, GATEWAY_SOCKET_FOLDER)];
  if (!isWritableByOthers(dirname(runtime))) folders.push(runtime);
  for (const folder of folders) {
    try {
      rmdirSync(folder);
    } catch {
      // ENOTEMPTY: still in use; ENOENT: already gone
    }
  }
}

function isWritableByOthers(folder: string): boolean {
  try {
    return (statSync(folder).mode & 0o002) !== 0;
  } catch {
    return true; // unknown: keep the name
  }
}

/**
 * At the gateway's stop, once every backend has stopped: the sockets of its backends' slots,
 * which nothing listens on any more (each start makes its own). Only the gateway's stop calls
 * this: an agent's `personalclaw mcp` shares the folder while the gateway's backends run.
 */
export function clearSlotSockets(runtime: string): void {
  for (let slot = 0; slot < BACKEND_SLOTS; slot++) {
    const file = join(runtime, slotSocketName(slot));
    try {
      if (lstatSync(file).isSocket()) rmSync(file, { force: true });
    } catch {
      // no socket at this slot
    }
  }
}

/** Before workerd starts: a gateway socket left by a gateway that died would refuse workerd's bind. */
export function clearGatewaySocket(runtime: string): void {
  rmSync(join(runtime, GATEWAY_SOCKET_FOLDER, GATEWAY_SOCKET_NAME), { force: true });
}

/** Creates the home (0700) and its folders; an existing home is tightened to 0700. */
export function ensureHome(home: string): HomePaths {
  const paths = homePaths(home);
  mkdirSync(home, { recursive: true, mode: 0o700 });
  chmodSync(home, 0o700);
  for (const dir of [paths.state, paths.run, paths.logs, paths.apps, paths.quarantine])
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  return paths;
}

/** A fresh 256-bit internal credential for this start, written to .local_secret (0600). */
export function writeFreshLocalSecret(paths: HomePaths): string {
  const secret = randomBytes(32).toString("hex");
  writePrivateFile(paths.localSecret, secret);
  return secret;
}

/** The security log's SQLite file under <home>/state, or null when the log has no storage (never had, or lost). */
export function securityLogFile(stateDir: string): string | null {
  const dir = storeFolder(stateDir, "SecurityLog");
  try {
    const name = readdirSync(dir).find((file) => file.endsWith(".sqlite") && file !== "metadata.sqlite");
    return name === undefined ? null : join(dir, name);
  } catch {
    return null;
  }
}

/**
 * What the security log is started with. A fresh home makes the seed, hands the log only the
 * key of epoch 0 (one way from the seed) as SEL_KEY, and never writes the seed in the clear
 * (`firstSeed` tells the start to show it and, with a passphrase, seal it). A home whose log exists passes no key: the
 * log keeps its own current epoch key. A home from before epochs keeps its `sel_hmac.key`,
 * which is that log's seed; one that exists but cannot be read is a refusal to start (fail
 * closed): replacing it would silently break verification of every existing row.
 */
export async function readOrCreateSelKey(
  paths: HomePaths,
): Promise<{ ok: true; keyHex: string; firstSeed: string | null } | { ok: false; reason: string }> {
  if (!existsSync(paths.selKey)) {
    if (securityLogFile(paths.state) !== null) return { ok: true, keyHex: "", firstSeed: null };
    const seed = freshSeed();
    return { ok: true, keyHex: await firstEpochKey(seed), firstSeed: seed };
  }
  try {
    const key = readFileSync(paths.selKey);
    if (key.length !== 32)
      return { ok: false, reason: `${paths.selKey} holds ${key.length} bytes, not 32; restore the original key file.` };
    if ((statSync(paths.selKey).mode & 0o077) !== 0) chmodSync(paths.selKey, 0o600);
    return { ok: true, keyHex: key.toString("hex"), firstSeed: null };
  } catch (error) {
    return {
      ok: false,
      reason: `${paths.selKey} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}); fix its permissions or restore it.`,
    };
  }
}
