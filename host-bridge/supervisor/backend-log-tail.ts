// Reads one app backend's last lines out of <home>/logs/gateway.log, where the log relay
// writes every line a backend prints, tagged `app <name> backend (pid N): `, and the
// supervisor its starts, exits and restarts. Only the log's tail is read (reaching into the
// newest rotated file when the current one is short), so a large log costs the same as a small
// one. Lines are masked and escaped before the search runs: a search on the raw text would
// answer whether a masked credential is there.
import { open } from "node:fs/promises";
import { safeLine } from "../../kernel/text/text-safety.js";
import type { AppLogAnswer, AppLogRequest } from "../../kernel/contracts/app-log.js";
import { rotatedLogPath } from "../gateway-log";
import { logLineAsText } from "../gateway-log-line";

/** How much of the log's end is read. */
export const LOG_TAIL_BYTES = 2 * 1024 * 1024;

/** The last `bytes` of the file (whole lines only), or null when there is no such file. */
async function readTail(path: string, bytes: number): Promise<{ text: string; isCut: boolean } | null> {
  try {
    const file = await open(path, "r");
    try {
      const { size } = await file.stat();
      const start = Math.max(0, size - bytes);
      const buffer = Buffer.alloc(size - start);
      await file.read(buffer, 0, buffer.length, start);
      const text = buffer.toString("utf8");
      // The first line of a cut tail is a part of a line.
      return start > 0 ? { text: text.slice(text.indexOf("\n") + 1), isCut: true } : { text, isCut: false };
    } finally {
      await file.close();
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

/** The app's backend lines from the end of the gateway log, oldest first; none when there is no log yet. */
export async function readBackendLog(logPath: string, request: AppLogRequest): Promise<AppLogAnswer> {
  const current = await readTail(logPath, LOG_TAIL_BYTES);
  if (current === null) return { lines: [], truncated: false };
  let { text, isCut } = current;
  // Just after a rotation the current file is short: the rest of the tail is the newest rotated file's end.
  const room = LOG_TAIL_BYTES - Buffer.byteLength(text, "utf8");
  if (!isCut && room > 0) {
    const previous = await readTail(rotatedLogPath(logPath, 1), room);
    if (previous !== null) {
      text = previous.text + text;
      isCut = previous.isCut;
    }
  }
  // `<iso time> <level> app <name> backend ...`; the name pattern admits no regex syntax.
  const mine = new RegExp(`^\\S+ (?:debug|info|warning|error) app ${request.name} backend\\b`);
  const needle = request.q?.toLowerCase() ?? "";
  const found: string[] = [];
  for (const written of text.split("\n")) {
    // logs.format json writes {time, level, source, message}: read as the text line it stands for.
    const raw = logLineAsText(written);
    if (!mine.test(raw)) continue;
    const line = safeLine(raw);
    if (needle === "" || line.toLowerCase().includes(needle)) found.push(line);
  }
  return { lines: found.slice(-request.lines), truncated: isCut };
}
