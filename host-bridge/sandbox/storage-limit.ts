// An app's storage limit (sandbox.limits.storage_mb): one number over its data/ and its private
// /tmp together. Threat: one app writing until the disk is full takes the gateway down with it
// (its security log, sign-in links, the uninstall that would remove the cause). Neither a disk
// quota nor a loop-mounted image is open to an ordinary user on a stock desktop, so the limit is
// split in two parts that each hold without privilege, and together never exceed it:
//   /tmp   a tmpfs of a quarter of the limit (bwrap --size): the kernel refuses a write past it;
//   data/  the other three quarters: the bridge measures it every second and stops an app child
//          whose data/ holds more, and a backend does not start again while it does.
import { lstat, readdir } from "node:fs/promises";
import path from "node:path";

/** How often a running child's data/ is measured. */
export const STORAGE_CHECK_MS = 1_000;

const PAGE = 4096;

/** The limit's two parts: /tmp's tmpfs size (whole pages, a quarter) and what data/ may hold (the rest). */
export function storageShares(storageBytes: number): { tmpBytes: number; dataBytes: number } {
  const tmpBytes = Math.max(PAGE, Math.floor(storageBytes / 4 / PAGE) * PAGE);
  return { tmpBytes, dataBytes: storageBytes - tmpBytes };
}

/**
 * The disk space `folder` takes (allocated blocks, each file once however many links it has;
 * links are not followed), or more than `stopAbove` as soon as the count passes it. A folder
 * that is not there takes nothing; entries removed meanwhile count for nothing.
 */
export async function folderBytes(folder: string, stopAbove = Infinity): Promise<number> {
  const seen = new Set<string>();
  let total = 0;
  const pending = [folder];
  while (pending.length > 0 && total <= stopAbove) {
    const dir = pending.pop()!;
    const st = await lstat(dir).catch(() => null);
    if (!st) continue;
    const key = `${st.dev}:${st.ino}`;
    if (!seen.has(key)) {
      seen.add(key);
      total += st.blocks * 512;
    }
    if (!st.isDirectory()) continue;
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names) pending.push(path.join(dir, name));
  }
  return total;
}

export interface StorageWatch {
  stop(): void;
}

/**
 * Measures `dataDir` every STORAGE_CHECK_MS (the next measure waits for the last, however
 * long a large folder takes) and calls `onExceeded` once, with what it holds, when that is
 * more than `dataBytes`; the watch then ends.
 */
export function watchStorage(opts: {
  dataDir: string;
  dataBytes: number;
  onExceeded: (usedBytes: number) => void;
  intervalMs?: number;
}): StorageWatch {
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  const check = async () => {
    timer = null;
    const used = await folderBytes(opts.dataDir, opts.dataBytes);
    if (stopped) return;
    if (used > opts.dataBytes) {
      stopped = true;
      opts.onExceeded(used);
      return;
    }
    timer = setTimeout(() => void check(), opts.intervalMs ?? STORAGE_CHECK_MS);
  };
  timer = setTimeout(() => void check(), opts.intervalMs ?? STORAGE_CHECK_MS);
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}

/** The sentence a child stopped at its storage limit, or refused a start for it, carries. */
export function storageLimitReason(usedBytes: number, dataBytes: number): string {
  const mib = (bytes: number) => (bytes / (1024 * 1024)).toFixed(1);
  return `its data/ holds ${mib(usedBytes)} MiB, more than the ${mib(dataBytes)} MiB its storage limit (sandbox.limits.storage_mb) leaves it; free space in it or raise the limit`;
}
