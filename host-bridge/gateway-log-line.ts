// How one gateway.log entry is written, as the owner's logs.format says: text
// (`<ISO time> <line>`) or a JSON object per line ({time, level, source, message}) a log tool
// reads without a parser of ours. The line's own words give the level (its first word, when
// it is one) and the source (the name before the first ": ", when it names a process or an app's
// child); an entry naming neither is the gateway's own, at level info.
import type { GatewayLogFormat } from "../kernel/contracts/owner-settings-logs";

export interface GatewayLogEntry {
  time: string;
  level: "debug" | "info" | "warning" | "error";
  source: string;
  message: string;
}

const LEVELS = new Set(["debug", "info", "warning", "error"]);
/**
 * A source is `app <name> <child> (pid N)` as the log relay tags a child, `<app>:<server>`, or
 * one or two plain words (`bridge`, `workerd`, `sel anchor`); a longer phrase before a colon is
 * part of the message ("removed 3 files ...: a, b").
 */
const SOURCE =
  /^(?:app [a-z0-9][a-z0-9_-]* [^:]{1,80}|[a-z0-9][a-z0-9_-]*:[A-Za-z0-9][A-Za-z0-9_.-]*|[a-z][a-z0-9_-]*(?: [a-z][a-z0-9_-]*)?)$/;

/** The level, source and message of one masked log line. */
export function logEntryOf(time: Date, line: string): GatewayLogEntry {
  let rest = line;
  let level: GatewayLogEntry["level"] = "info";
  const firstWord = rest.split(" ", 1)[0]!;
  if (LEVELS.has(firstWord) && rest.length > firstWord.length) {
    level = firstWord as GatewayLogEntry["level"];
    rest = rest.slice(firstWord.length + 1);
  }
  const colon = rest.indexOf(": ");
  const named = colon > 0 ? rest.slice(0, colon) : "";
  if (named !== "" && SOURCE.test(named))
    return { time: time.toISOString(), level, source: named, message: rest.slice(colon + 2) };
  return { time: time.toISOString(), level, source: "gateway", message: rest };
}

/** One masked line as gateway.log writes it in `format`, without its newline. */
export function formatLogLine(format: GatewayLogFormat, time: Date, line: string): string {
  if (format === "text") return `${time.toISOString()} ${line}`;
  // JSON.stringify writes a newline or a control character inside the message as an escape: one entry, one line.
  return JSON.stringify(logEntryOf(time, line));
}

/**
 * A line of gateway.log as text, whichever format wrote it: a JSON entry becomes
 * `<time> <level> <source>: <message>`, as the text format writes a leveled line.
 */
export function logLineAsText(raw: string): string {
  if (!raw.startsWith("{")) return raw;
  try {
    const entry = JSON.parse(raw) as Partial<GatewayLogEntry>;
    if (typeof entry.time !== "string" || typeof entry.message !== "string") return raw;
    const source = entry.source && entry.source !== "gateway" ? `${entry.source}: ` : "";
    return `${entry.time} ${entry.level ?? "info"} ${source}${entry.message}`;
  } catch {
    return raw;
  }
}
