// Reads a wheel's dist-info files (METADATA, entry_points.txt) from its bytes, in the bridge and
// without running anything of it: a wheel is a zip, read here through its central directory.
// Only stored and deflated entries are read, each bounded; a zip this does not read is refused.
import { inflateRawSync } from "node:zlib";

const MAX_ENTRY_BYTES = 1024 * 1024;

/** The text of the first entry whose name matches `pattern`, or null when the wheel has none. */
export function wheelEntryText(wheel: Buffer, pattern: RegExp): string | null {
  // The end-of-central-directory record is in the last 64 KiB + 22 bytes.
  let end = -1;
  for (let i = wheel.length - 22; i >= Math.max(0, wheel.length - 65_557); i--) {
    if (wheel.readUInt32LE(i) === 0x06054b50) {
      end = i;
      break;
    }
  }
  if (end < 0) throw new Error("it is not a zip file");
  const count = wheel.readUInt16LE(end + 10);
  let at = wheel.readUInt32LE(end + 16);
  for (let n = 0; n < count; n++) {
    if (at + 46 > wheel.length || wheel.readUInt32LE(at) !== 0x02014b50) throw new Error("its zip directory is broken");
    const method = wheel.readUInt16LE(at + 10);
    const compressed = wheel.readUInt32LE(at + 20);
    const size = wheel.readUInt32LE(at + 24);
    const nameLength = wheel.readUInt16LE(at + 28);
    const extraLength = wheel.readUInt16LE(at + 30);
    const commentLength = wheel.readUInt16LE(at + 32);
    const local = wheel.readUInt32LE(at + 42);
    const name = wheel.toString("utf8", at + 46, at + 46 + nameLength);
    at += 46 + nameLength + extraLength + commentLength;
    if (!pattern.test(name)) continue;
    if (size > MAX_ENTRY_BYTES || compressed > MAX_ENTRY_BYTES) throw new Error(`${name} is too large`);
    if (local + 30 > wheel.length || wheel.readUInt32LE(local) !== 0x04034b50)
      throw new Error("its zip entry is broken");
    const start = local + 30 + wheel.readUInt16LE(local + 26) + wheel.readUInt16LE(local + 28);
    const raw = wheel.subarray(start, start + compressed);
    if (method === 0) return raw.toString("utf8");
    if (method === 8) return inflateRawSync(raw, { maxOutputLength: MAX_ENTRY_BYTES }).toString("utf8");
    throw new Error(`${name} is compressed in a way this does not read`);
  }
  return null;
}

/** The Requires-Dist lines of a METADATA text. */
export function requiresDist(metadata: string): string[] {
  const head = metadata.split(/\r?\n\r?\n/)[0] ?? "";
  return head
    .split(/\r?\n/)
    .filter((line) => /^Requires-Dist:/i.test(line))
    .map((line) => line.slice(line.indexOf(":") + 1).trim());
}

/** The console scripts of an entry_points.txt: name -> `module:function`. */
export function consoleScripts(entryPoints: string | null): Record<string, string> {
  const scripts: Record<string, string> = {};
  let inSection = false;
  for (const raw of (entryPoints ?? "").split(/\r?\n/)) {
    const line = raw.trim();
    if (line.startsWith("[")) inSection = line === "[console_scripts]";
    else if (inSection && line.includes("=")) {
      const eq = line.indexOf("=");
      scripts[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
    }
  }
  return scripts;
}
