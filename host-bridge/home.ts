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
} from "../workers/contracts/backend-slots";
import { writePrivateFile } from "./private-file";
import { storeFolder } from "./durable-object-stores";
import { freshSeed } from "./sel-seed";
import { firstEpochKey } from "../durable/security-log/epoch-key";
import { createHash, randomBytes } from "node:crypto";
import { dirname, join } from "node:path";
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
  gatewayLog: join(home, "logs", "gateway.log"),
  /** The MCP server map agents read (docs/mcp-servers.md); app servers are `<app>:<server>` entries. */
  mcpJson: join(home, "mcp.json"),
});
export type HomePaths = ReturnType<typeof homePaths>;

/**
 * The bridge's runtime folder for this home: backend slot sockets and egress broker sockets.
 * Short (a UNIX socket path has 108 bytes), outside the home (apps never see it), and the
 * owner's alone: under $XDG_RUNTIME_DIR when it is set, else /tmp/personalclaw-<uid>-<home>.
 * A folder someone else made there first, a link, or a wider mode is refused (squatting).
 */
export function runtimeDir(home: string, xdgRuntimeDir: string | undefined): string {
  const uid = process.getuid?.() ?? 0;
  const tag = createHash("sha256").update(home).digest("hex").slice(0, 12);
  const base =
    xdgRuntimeDir && xdgRuntimeDir.startsWith("/") && existsSync(xdgRuntimeDir)
      ? join(xdgRuntimeDir, `personalclaw-${tag}`)
      : join(tmpdir(), `personalclaw-${uid}-${tag}`);
  mkdirSync(base, { recursive: true, mode: 0o700 });
  const st = lstatSync(base);
  if (!st.isDirectory() || st.uid !== uid)
    throw new Error(`${base} is not a folder of this user; remove it and start again`);
  if ((st.mode & 0o077) !== 0) chmodSync(base, 0o700);
  mkdirSync(join(base, GATEWAY_SOCKET_FOLDER), { recursive: true, mode: 0o700 });
  return base;
}

/**
 * After a clean stop, what the gateway made in its runtime folder goes, and the folder itself
 * when nothing is left in it, so starts of many homes leave nothing behind. Two things keep it:
 * sockets of another process still in use (an agent's `personalclaw mcp` and its egress
 * brokers, or the gateway beside it), and a parent anyone may write to (/tmp without
 * $XDG_RUNTIME_DIR), where the freed name could be taken by another user and the next start
 * refused; there the empty folder holds the name, as it did before the stop.
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
