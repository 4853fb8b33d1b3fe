// The one way the bridge reads back a record it keeps under the home (journals, manifests,
// parked-data records, the gateway file, sealed secrets): opened without following a link and
// without blocking on a planted pipe, a regular file only, at most `maxBytes`, strict JSON
// (no duplicate or prototype-altering keys, bounded depth), then its schema. A record is found, absent, or
// unreadable with a reason; nothing is half-trusted.
import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";
import type { z } from "zod";
import { parseStrictJson } from "../kernel/text/strict-json";

/** What reading a record found. */
export type PrivateRecord<T> =
  { found: "record"; value: T } | { found: "none" } | { found: "unreadable"; reason: string };

/** Reads the record at `path` (see the file's comment for every check). Never throws. */
export function readPrivateRecordFile<T>(path: string, schema: z.ZodType<T>, maxBytes = 1024 * 1024): PrivateRecord<T> {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { found: "none" };
    return { found: "unreadable", reason: code === "ELOOP" ? "it is a link" : String(code ?? error) };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { found: "unreadable", reason: "it is not a regular file" };
    if (st.size > maxBytes) return { found: "unreadable", reason: `it is larger than ${maxBytes} bytes` };
    const parsed = parseStrictJson(readFileSync(fd, "utf8"));
    if (!parsed.ok) return { found: "unreadable", reason: "it is not strict JSON" };
    const record = schema.safeParse(parsed.value);
    return record.success
      ? { found: "record", value: record.data }
      : { found: "unreadable", reason: "it is not a valid record" };
  } catch (error) {
    return { found: "unreadable", reason: error instanceof Error ? error.message : String(error) };
  } finally {
    closeSync(fd);
  }
}

/** The record at `path`, or null when it is absent or unreadable. */
export function readPrivateRecord<T>(path: string, schema: z.ZodType<T>, maxBytes?: number): T | null {
  const read = readPrivateRecordFile(path, schema, maxBytes);
  return read.found === "record" ? read.value : null;
}
