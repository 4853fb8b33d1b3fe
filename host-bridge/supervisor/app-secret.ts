// The per-app proxy-signature secret (PERSONALCLAW_APP_SECRET), kept in <appDir>/.app_secret.
import { randomBytes } from "node:crypto";
import { chmodSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";

export type AppSecretResult = { ok: true; secret: string } | { ok: false; reason: string; cause: unknown };

/** 256 bits from the OS generator, hex. */
export function generateAppSecret(): string {
  return randomBytes(32).toString("hex");
}

/**
 * Writes the secret owner-only (0600) by staging and renaming: rename replaces a link planted
 * at .app_secret instead of writing through it, and a reader never sees a half-written file.
 * A failure is a result; the caller does not start the backend (fail closed).
 */
export function writeAppSecret(appDir: string, secret: string): AppSecretResult {
  const target = path.join(appDir, ".app_secret");
  const staging = path.join(appDir, `.app_secret.${randomBytes(6).toString("hex")}.tmp`);
  try {
    writeFileSync(staging, secret, { mode: 0o600, flag: "wx" });
    chmodSync(staging, 0o600); // the umask cannot widen it, but a 0600 we did not check is a guess
    renameSync(staging, target);
    return { ok: true, secret };
  } catch (cause) {
    rmSync(staging, { force: true });
    return { ok: false, reason: cause instanceof Error ? cause.message : String(cause), cause };
  }
}
