// Formatting of times and durations for display; every result is plain text.

/** "3d 4h", "2h 5m", "4m 10s", "12s". */
export function formatDuration(totalSeconds) {
  if (typeof totalSeconds !== "number" || !Number.isFinite(totalSeconds) || totalSeconds < 0) return "unknown";
  const s = Math.floor(totalSeconds);
  const days = Math.floor(s / 86400);
  const hours = Math.floor((s % 86400) / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  const seconds = s % 60;
  if (days > 0) return `${days}d ${hours}h`;
  if (hours > 0) return `${hours}h ${minutes}m`;
  if (minutes > 0) return `${minutes}m ${seconds}s`;
  return `${seconds}s`;
}

/** Parses an ISO string or epoch milliseconds; null when it is neither. */
export function parseTime(value) {
  if (typeof value === "number" && Number.isFinite(value)) return new Date(value);
  if (typeof value === "string" && value !== "") {
    const date = new Date(value);
    if (!Number.isNaN(date.getTime())) return date;
  }
  return null;
}

/** A local date and time, e.g. "2026-04-26 14:03:07". */
export function formatTime(value) {
  const date = parseTime(value);
  if (date === null) return value === null || value === undefined ? "—" : String(value);
  const pad = (n) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

/** "in 19h 58m" / "3m 2s ago", relative to now. */
export function formatRelative(value, now = Date.now()) {
  const date = parseTime(value);
  if (date === null) return "—";
  const delta = Math.round((date.getTime() - now) / 1000);
  if (Math.abs(delta) < 5) return "just now";
  return delta > 0 ? `in ${formatDuration(delta)}` : `${formatDuration(-delta)} ago`;
}

/** Any JSON value as one compact line of text. */
export function compactJson(value) {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

/** A command line for display: arguments with spaces or quotes are JSON-quoted. */
export function formatCommand(command, args) {
  const words = [command, ...(Array.isArray(args) ? args : [])].filter((w) => typeof w === "string");
  return words.map((w) => (/^[\w@%+=:,./-]+$/.test(w) ? w : JSON.stringify(w))).join(" ");
}
