// Writes an archive's files (every part but the Durable Objects' exports) under a folder: each
// folder with its mode, each file created new (never through a link, never over a file), filled
// from its opened part, flushed before the next, and given its mode — never group- or
// world-writable. The replace and the merge restore both write through here.
import { constants } from "node:fs";
import { chmod, mkdir, open } from "node:fs/promises";
import { dirname } from "node:path";
import type { PartEntry } from "./archive-format";
import type { CheckedArchive } from "./archive-check";

/** Where a folder or a part of the home goes, or null to leave it out. */
export type PlaceOf = (homePath: string) => string | null;

/** Writes the chosen folders and files; `afterEach` runs after each file (the count written so far). */
export async function writeArchiveFiles(
  checked: CheckedArchive,
  placeOf: PlaceOf,
  afterEach: (written: number, total: number) => Promise<void> = async () => undefined,
): Promise<number> {
  const { archive, key } = checked;
  // Parents before children.
  for (const folder of [...archive.manifest.folders].sort((a, b) => a.path.localeCompare(b.path))) {
    const target = placeOf(folder.path);
    if (target === null) continue;
    await mkdir(target, { recursive: true, mode: 0o700 });
    await chmod(target, folder.mode & 0o755);
  }
  const parts: Array<[PartEntry, string]> = [];
  for (const part of archive.manifest.parts) {
    const target = part.kind === "store" ? null : placeOf(part.path);
    if (target !== null) parts.push([part, target]);
  }
  let written = 0;
  for (const [part, target] of parts) {
    await mkdir(dirname(target), { recursive: true, mode: 0o700 });
    const fh = await open(
      target,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o600,
    );
    try {
      for await (const chunk of archive.openPart(key, part)) await fh.write(chunk);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await chmod(target, part.mode & 0o755);
    written++;
    await afterEach(written, parts.length);
  }
  return written;
}
