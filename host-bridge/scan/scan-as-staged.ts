// Scans each file as staging writes it, from the very bytes it wrote (stageBundle's
// onFileStaged): no file is read twice, and a file's scan runs while the other copies in flight
// wait on the disk. Results are kept by path, so the order in which copies finish changes
// nothing; scanStaged reads back only a file that was never shown here.
import type { StagedEntry } from "../staging/stage-bundle";
import { MAX_SCANNED_FILE_BYTES, scanFileBytes, type FileScan, type ScanOptions } from "./scan-staged";

/** A reader for stageBundle's onFileStaged, and the scan of every file it was shown, by path. */
export function scanAsStaged(opts: ScanOptions = {}): {
  onFileStaged: (entry: StagedEntry, bytes: Buffer) => void;
  scanned: ReadonlyMap<string, FileScan>;
  /** The largest file the scan reads whole: shown every file up to it, the scan reads none back. */
  wholeUpTo: number;
} {
  const limit = opts.maxFileBytes ?? MAX_SCANNED_FILE_BYTES;
  const scanned = new Map<string, FileScan>();
  return {
    scanned,
    wholeUpTo: limit,
    onFileStaged: (entry, bytes) => {
      // A file larger than the scan reads whole is left to scanStaged, which reports it.
      if (bytes.length <= limit) scanned.set(entry.path, scanFileBytes(entry, bytes));
    },
  };
}
