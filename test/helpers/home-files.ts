// What a running gateway's home holds on disk, read while the gateway keeps writing to it.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Every regular file under `dir` whose bytes contain `needle`. A file the gateway renames or
 * removes between the listing and the read (a staging file of a durable write) is passed over:
 * it is gone, and what it held is in the file it became, which the listing names.
 */
export function filesHolding(dir: string, needle: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    let bytes: Buffer;
    try {
      bytes = readFileSync(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw error;
    }
    if (bytes.includes(needle)) found.push(path);
  }
  return found;
}
