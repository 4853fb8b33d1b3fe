// <home>/logs/gateway.log, kept writable through a full or failing disk: a line that cannot be
// written (ENOSPC, EIO, ...) goes to stderr instead, whatever part of it reached the file is
// cut off again (no half line), and the file is tried again every few seconds, so the log
// resumes by itself once space returns. A log write never throws into its caller.
//
// The log is bounded: a line that would take the file past its size (the owner's logs.max_size_mb,
// GATEWAY_LOG_MAX_BYTES by default) first moves it to gateway.log.1 (and .1 to .2, and so on); the
// oldest of logs.max_files (GATEWAY_LOG_KEPT) is dropped. A gateway that runs for weeks with a
// chatty backend never fills the owner's disk with its log. How a line is written (text or
// JSON) is gateway-log-line.ts's.
import { closeSync, fstatSync, ftruncateSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { storageFullReason } from "../kernel/contracts/storage-full";

/** How long the log writes to stderr before it tries the file again. */
export const GATEWAY_LOG_RETRY_MS = 5_000;
/** The size past which gateway.log is rotated. */
export const GATEWAY_LOG_MAX_BYTES = 10 * 1024 * 1024;
/** How many rotated files are kept beside it (gateway.log.1 is the newest). */
export const GATEWAY_LOG_KEPT = 5;

/** The n-th rotated file of the log at `path` (1: the newest). */
export function rotatedLogPath(path: string, n: number): string {
  return `${path}.${n}`;
}

export interface GatewayLogLimits {
  maxBytes: number;
  kept: number;
}

export interface GatewayLog {
  write: (line: string) => void;
  /** True while lines go to stderr because the file cannot take them. */
  isDegraded: () => boolean;
  close: () => void;
}

/** Opens gateway.log for appending: whole lines, bounded by rotation, and a write that never throws (stderr while the disk refuses). */
export function openGatewayLog(
  path: string,
  stderr: (text: string) => void = (text) => void process.stderr.write(text),
  now: () => number = Date.now,
  limits: GatewayLogLimits = { maxBytes: GATEWAY_LOG_MAX_BYTES, kept: GATEWAY_LOG_KEPT },
): GatewayLog {
  const file = openBoundedLogFile(path, stderr, now, limits);
  let degradedSince: number | null = null;
  let lastTry = 0;
  let lost = 0;
  let retryTimer: NodeJS.Timeout | null = null;
  const recover = (): boolean => {
    lastTry = now();
    try {
      file.appendWhole(
        `${new Date(now()).toISOString()} gateway.log is writable again; ${lost} line(s) went to stderr meanwhile\n`,
      );
    } catch (error) {
      degrade(error);
      return false;
    }
    degradedSince = null;
    lost = 0;
    if (retryTimer) clearInterval(retryTimer);
    retryTimer = null;
    return true;
  };
  const degrade = (error: unknown) => {
    if (retryTimer === null) {
      // Tried again on its own, so the file resumes even when no new line comes.
      retryTimer = setInterval(recover, GATEWAY_LOG_RETRY_MS);
      retryTimer.unref();
    }
    if (degradedSince === null) {
      degradedSince = now();
      const reason = storageFullReason(error) ?? (error as NodeJS.ErrnoException)?.code ?? String(error);
      stderr(
        `personalclaw: warning: ${path} cannot be written (${reason}); log lines go to stderr until it can be again.\n`,
      );
    }
    file.drop();
  };
  return {
    write(line) {
      const text = line.endsWith("\n") ? line : `${line}\n`;
      if (degradedSince !== null && now() - lastTry < GATEWAY_LOG_RETRY_MS) {
        lost += 1;
        stderr(text);
        return;
      }
      if (degradedSince !== null && !recover()) {
        lost += 1;
        stderr(text);
        return;
      }
      try {
        file.appendWhole(text);
      } catch (error) {
        degrade(error);
        lost += 1;
        stderr(text);
      }
    },
    isDegraded: () => degradedSince !== null,
    close() {
      if (retryTimer) clearInterval(retryTimer);
      retryTimer = null;
      file.close();
    },
  };
}

/** The log's file: only whole lines, and never past its bound while a rotation can be made. */
interface BoundedLogFile {
  /** Appends text whole, rotating first when it would take the file past its bound; throws when the disk refuses it, with any part written cut off again. */
  appendWhole: (text: string) => void;
  /** Lets go of the descriptor after a failure (a close that fails too is ignored); the next line opens the file again. */
  drop: () => void;
  close: () => void;
}

function openBoundedLogFile(
  path: string,
  stderr: (text: string) => void,
  now: () => number,
  limits: GatewayLogLimits,
): BoundedLogFile {
  let fd: number | null = null;
  let rotationFailedAt: number | null = null;
  const open = () => {
    if (fd === null) fd = openSync(path, "a", 0o600);
    return fd;
  };
  // Each file moves one place down, the oldest is dropped, and the next line starts a new file.
  // A rotation that fails (tried again at most every GATEWAY_LOG_RETRY_MS) leaves the line in
  // the current file: a line is never lost to its bound.
  const rotate = (target: number) => {
    if (rotationFailedAt !== null && now() - rotationFailedAt < GATEWAY_LOG_RETRY_MS) return target;
    try {
      rmSync(rotatedLogPath(path, limits.kept), { force: true });
      for (let n = limits.kept - 1; n >= 1; n -= 1) {
        try {
          renameSync(rotatedLogPath(path, n), rotatedLogPath(path, n + 1));
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
        }
      }
      renameSync(path, rotatedLogPath(path, 1));
    } catch (error) {
      if (rotationFailedAt === null)
        stderr(
          `personalclaw: warning: ${path} could not be rotated (${(error as NodeJS.ErrnoException)?.code ?? String(error)}); it grows past ${limits.maxBytes} bytes until it can be.\n`,
        );
      rotationFailedAt = now();
      return target;
    }
    rotationFailedAt = null;
    closeSync(target);
    fd = null;
    return open();
  };
  return {
    appendWhole(text) {
      const bytes = Buffer.from(text, "utf8");
      let target = open();
      let before = fstatSync(target).size;
      if (before > 0 && before + bytes.length > limits.maxBytes) {
        target = rotate(target);
        before = fstatSync(target).size;
      }
      try {
        let written = 0;
        while (written < bytes.length) written += writeSync(target, bytes, written, bytes.length - written);
      } catch (error) {
        try {
          ftruncateSync(target, before);
        } catch {
          // The disk refused the cut too; the next successful line starts after a partial one.
        }
        throw error;
      }
    },
    drop() {
      if (fd !== null) {
        try {
          closeSync(fd);
        } catch {
          // Already unusable.
        }
        fd = null;
      }
    },
    close() {
      if (fd !== null) closeSync(fd);
      fd = null;
    },
  };
}
