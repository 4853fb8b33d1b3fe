// Files only the owner may read (secrets, keys, records), written so that no reader ever sees
// them half-written or with a wider mode: a fresh staging file is created 0600 (failing if
// that name exists), filled, and renamed over the target. Rename replaces a link planted at
// the target instead of writing through it, and an existing file's old mode never carries over.
import { randomBytes } from "node:crypto";
import { chmodSync, renameSync, rmSync, writeFileSync } from "node:fs";

/** Writes `content` to `path`, readable by the owner only; throws on failure, leaving no staging file. */
export function writePrivateFile(path: string, content: string | Buffer): void {
  const staging = `${path}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    writeFileSync(staging, content, { mode: 0o600, flag: "wx" });
    chmodSync(staging, 0o600); // the umask cannot widen it, but a 0600 we did not check is a guess
    renameSync(staging, path);
  } catch (error) {
    rmSync(staging, { force: true });
    throw error;
  }
}
