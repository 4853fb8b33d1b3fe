// The PersonalClaw home: created 0700; its secret files are written 0600 and atomically
// (host-bridge/private-file.ts).
import { mkdirSync, chmodSync, readFileSync, statSync, existsSync } from "node:fs";
import { writePrivateFile } from "./private-file";
import { randomBytes } from "node:crypto";
import { join } from "node:path";

export const homePaths = (home: string) => ({
  home,
  localSecret: join(home, ".local_secret"),
  selKey: join(home, "sel_hmac.key"),
  selAnchor: join(home, "sel_anchor.json"),
  gatewayFile: join(home, "gateway.json"),
  state: join(home, "state"),
  run: join(home, "run"),
  logs: join(home, "logs"),
  apps: join(home, "apps"),
  quarantine: join(home, "apps", ".quarantine"),
  workerdConfig: join(home, "run", "workerd.capnp"),
  gatewayLog: join(home, "logs", "gateway.log"),
});
export type HomePaths = ReturnType<typeof homePaths>;

/** Creates the home (0700) and its folders; an existing home is tightened to 0700. */
export function ensureHome(home: string): HomePaths {
  const paths = homePaths(home);
  mkdirSync(home, { recursive: true, mode: 0o700 });
  chmodSync(home, 0o700);
  for (const dir of [paths.state, paths.run, paths.logs, paths.apps, paths.quarantine]) mkdirSync(dir, { recursive: true, mode: 0o700 });
  return paths;
}

/** A fresh 256-bit internal credential for this start, written to .local_secret (0600). */
export function writeFreshLocalSecret(paths: HomePaths): string {
  const secret = randomBytes(32).toString("hex");
  writePrivateFile(paths.localSecret, secret);
  return secret;
}

/**
 * The security log's HMAC key: created once (32 random bytes, 0600) and kept for the life
 * of the log. A key that exists but cannot be read is a refusal to start (fail closed):
 * replacing it would silently break verification of every existing row.
 */
export function readOrCreateSelKey(paths: HomePaths): { ok: true; keyHex: string } | { ok: false; reason: string } {
  if (!existsSync(paths.selKey)) {
    if (existsSync(join(paths.state, "personalclaw-security-log"))) {
      return { ok: false, reason: `${paths.selKey} is missing but the security log exists; restore the key file (a new key could not verify the existing rows).` };
    }
    writePrivateFile(paths.selKey, randomBytes(32));
  }
  try {
    const key = readFileSync(paths.selKey);
    if (key.length !== 32) return { ok: false, reason: `${paths.selKey} holds ${key.length} bytes, not 32; restore the original key file.` };
    if ((statSync(paths.selKey).mode & 0o077) !== 0) chmodSync(paths.selKey, 0o600);
    return { ok: true, keyHex: key.toString("hex") };
  } catch (error) {
    return { ok: false, reason: `${paths.selKey} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}); fix its permissions or restore it.` };
  }
}
