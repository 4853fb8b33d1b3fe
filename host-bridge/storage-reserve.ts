// A reserve of disk space for the gateway's own state. Threat: something fills the disk (an app
// faster than its storage check, any other program of the owner's); then every refusal fails to
// become a row, the security log cannot be read, no sign-in link can be minted and nothing can
// be uninstalled, so the owner cannot remove the cause through PersonalClaw. The bridge keeps a
// ballast file of RESERVE_BYTES in the home, removes it when the home's free space runs low,
// which hands that space to the gateway's own writes, and makes it again once space returns.
import { randomFillSync } from "node:crypto";
import { open, rename, rm, stat, statfs } from "node:fs/promises";
import { join } from "node:path";

/** The ballast's size: room for the security log's rows, sessions and an uninstall's journal. */
export const RESERVE_BYTES = 32 * 1024 * 1024;
/** Free space below which the ballast is removed. */
export const RELEASE_BELOW_BYTES = 8 * 1024 * 1024;
/** Free space from which the ballast is made again: after it, still more than the release mark (no flapping). */
export const REMAKE_FROM_BYTES = RESERVE_BYTES + 4 * RELEASE_BELOW_BYTES;
/** How often the home's free space is asked. */
export const RESERVE_CHECK_MS = 1_000;

export function reserveFile(home: string): string {
  return join(home, "storage_reserve");
}

/** The bytes an unprivileged writer may still write on the filesystem holding `folder`. */
export async function availableBytes(folder: string): Promise<number> {
  const fs = await statfs(folder);
  return fs.bavail * fs.bsize;
}

/**
 * Writes the ballast whole or not at all (staged, then renamed). Its bytes are random: a
 * compressing filesystem would store zeros in no space at all. One buffer is refilled for each
 * MiB (a write completes before the next fill), so a fresh home's first start allocates no 32 MiB.
 */
export async function makeReserve(file: string, bytes = RESERVE_BYTES): Promise<boolean> {
  const staged = `${file}.new`;
  try {
    const handle = await open(staged, "w", 0o600);
    try {
      const chunk = Buffer.allocUnsafe(1024 * 1024);
      for (let written = 0; written < bytes; written += chunk.length) {
        const part = chunk.subarray(0, Math.min(chunk.length, bytes - written));
        await handle.write(randomFillSync(part));
      }
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(staged, file);
    return true;
  } catch {
    await rm(staged, { force: true });
    return false;
  }
}

export interface StorageReserve {
  /** One look at the free space: releases or remakes the ballast as it says. */
  check(): Promise<void>;
  stop(): void;
}

/** Keeps the home's reserve: checked now and every RESERVE_CHECK_MS until stopped. */
export function keepStorageReserve(opts: {
  home: string;
  log: (line: string) => void;
  /** The reserve was released (a security-log row): what was free when it was. */
  onReleased: (availableBytes: number) => void;
}): StorageReserve {
  const file = reserveFile(opts.home);
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  const once = async () => {
    const available = await availableBytes(opts.home).catch(() => null);
    if (available === null) return;
    const held = await stat(file).then(
      (st) => st.isFile(),
      () => false,
    );
    if (held && available < RELEASE_BELOW_BYTES) {
      await rm(file, { force: true });
      opts.log(
        `storage: the disk holding ${opts.home} is nearly full (${available} bytes free); its ${RESERVE_BYTES >> 20} MiB reserve is released for the gateway's own state. Free space on it; the reserve is made again once there is.`,
      );
      opts.onReleased(available);
    } else if (!held && available >= REMAKE_FROM_BYTES) {
      if (await makeReserve(file)) opts.log(`storage: the gateway's ${RESERVE_BYTES >> 20} MiB reserve is in place`);
    }
  };
  const check = () => (running = running.then(once, once));
  const tick = () => {
    timer = null;
    void check().finally(() => {
      if (!stopped) timer = setTimeout(tick, RESERVE_CHECK_MS);
    });
  };
  tick();
  return {
    check,
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
