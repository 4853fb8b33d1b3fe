// <home>/logs/gateway.log, kept writable through a full or failing disk: a line that cannot be
// written (ENOSPC, EIO, ...) goes to stderr instead, whatever part of it reached the file is
// cut off again (no half line), and the file is tried again every few seconds, so the log
// resumes by itself once space returns. A log write never throws into its caller.
import { closeSync, fstatSync, ftruncateSync, openSync, writeSync } from "node:fs";
import { storageFullReason } from "../workers/contracts/storage-full";

/** How long the log writes to stderr before it tries the file again. */
export const GATEWAY_LOG_RETRY_MS = 5_000;

export interface GatewayLog {
  write: (line: string) => void;
  /** True while lines go to stderr because the file cannot take them. */
  isDegraded: () => boolean;
  close: () => void;
}

export function openGatewayLog(
  path: string,
  stderr: (text: string) => void = (text) => void process.stderr.write(text),
  now: () => number = Date.now,
): GatewayLog {
  let fd: number | null = null;
  let degradedSince: number | null = null;
  let lastTry = 0;
  let lost = 0;
  const open = () => {
    if (fd === null) fd = openSync(path, "a", 0o600);
    return fd;
  };
  const appendWhole = (text: string) => {
    const target = open();
    const before = fstatSync(target).size;
    const bytes = Buffer.from(text, "utf8");
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
  };
  let retryTimer: NodeJS.Timeout | null = null;
  const recover = (): boolean => {
    lastTry = now();
    try {
      appendWhole(
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
    if (fd !== null) {
      try {
        closeSync(fd);
      } catch {
        // Already unusable.
      }
      fd = null;
    }
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
        appendWhole(text);
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
      if (fd !== null) closeSync(fd);
      fd = null;
    },
  };
}
