// The value types CLI flags take, each refusing bad text with a reason the usage error quotes.
import { parseTtl } from "../../kernel/contracts/session";
import type { ParsedValue } from "./command-table";

/** A TCP port, 0 (pick a free one) to 65535. */
export function portValue(text: string): ParsedValue<number> {
  const port = Number(text);
  return /^\d+$/.test(text) && port <= 65535
    ? { ok: true, value: port }
    : { ok: false, reason: "is not a port: use a number from 0 to 65535" };
}

/** A whole number from 1 to `max`. */
export function countValue(max: number): (text: string) => ParsedValue<number> {
  return (text) => {
    const count = Number(text);
    return /^\d+$/.test(text) && count >= 1 && count <= max
      ? { ok: true, value: count }
      : { ok: false, reason: `is not a count: use a whole number from 1 to ${max}` };
  };
}

/** A lifetime such as 30m, 20h or 7d, read by the same rule the gateway applies (too long is the gateway's to say). */
export function durationValue(text: string): ParsedValue<string> {
  const parsed = parseTtl(text);
  return parsed.ok || parsed.code === "token_ttl_too_long"
    ? { ok: true, value: text }
    : { ok: false, reason: "is not a duration (token_ttl_invalid): ask for one like 30m, 20h or 7d" };
}

/** One of a fixed list of words. */
export function oneOf<const T extends string>(choices: readonly T[]): (text: string) => ParsedValue<T> {
  return (text) =>
    (choices as readonly string[]).includes(text)
      ? { ok: true, value: text as T }
      : { ok: false, reason: `is not one of ${choices.join(", ")}` };
}

/** An ISO-8601 time. */
export function timeValue(text: string): ParsedValue<string> {
  return /^\d{4}-\d\d-\d\d/.test(text) && !Number.isNaN(Date.parse(text))
    ? { ok: true, value: text }
    : { ok: false, reason: "is not an ISO-8601 time such as 2026-01-31T12:00:00Z" };
}

/** An http(s) address. */
export function httpUrlValue(text: string): ParsedValue<string> {
  return /^https?:\/\/[^\s]+$/.test(text) && URL.canParse(text)
    ? { ok: true, value: text }
    : { ok: false, reason: "is not an http(s) address" };
}

/** A consent digest as preview prints it (sha256:<64 hex>) or the bare hex. */
export function digestValue(text: string): ParsedValue<string> {
  return /^(sha256:)?[0-9a-f]{64}$/.test(text)
    ? { ok: true, value: text }
    : { ok: false, reason: "is not a consent digest as `apps preview` prints it" };
}
