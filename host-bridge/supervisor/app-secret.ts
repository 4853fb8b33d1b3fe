// The per-app proxy-signature secret (PERSONALCLAW_APP_SECRET), kept in <appDir>/.app_secret.
import { randomBytes } from "node:crypto";
import { writePrivateFile } from "../private-file";
import path from "node:path";

export type AppSecretResult = { ok: true; secret: string } | { ok: false; reason: string; cause: unknown };

/** 256 bits from the OS generator, hex. */
export function generateAppSecret(): string {
  return randomBytes(32).toString("hex");
}

/** Writes the secret owner-only (0600); a failure is a result: the caller does not start the backend (fail closed). */
export function writeAppSecret(appDir: string, secret: string): AppSecretResult {
  try {
    writePrivateFile(path.join(appDir, ".app_secret"), secret);
    return { ok: true, secret };
  } catch (cause) {
    return { ok: false, reason: cause instanceof Error ? cause.message : String(cause), cause };
  }
}
