// One rule for "the disk is full": Node's ENOSPC/EDQUOT/EIO codes and SQLite's SQLITE_FULL /
// SQLITE_IOERR (as workerd's Durable Object storage words them) are one condition, so the
// worker, the host bridge and the CLI answer it alike (507 `storage_full`), never as a crash.

const FULL_CODES = new Set(["ENOSPC", "EDQUOT", "EIO", "SQLITE_FULL", "SQLITE_IOERR"]);
const FULL_TEXT =
  /\b(ENOSPC|EDQUOT|SQLITE_FULL|SQLITE_IOERR\w*|database or disk is full|no space left on device|disk I\/O error)\b/i;

/** The short reason when `error` (or its cause) says the disk is full or failing; null otherwise. */
export function storageFullReason(error: unknown, depth = 0): string | null {
  if (error === null || error === undefined || depth > 4) return null;
  if (typeof error === "string") return FULL_TEXT.exec(error)?.[1] ?? null;
  if (typeof error !== "object") return null;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && FULL_CODES.has(code)) return code;
  const message = (error as { message?: unknown }).message;
  const found = typeof message === "string" ? FULL_TEXT.exec(message) : null;
  if (found) return found[1];
  return storageFullReason((error as { cause?: unknown }).cause, depth + 1);
}
