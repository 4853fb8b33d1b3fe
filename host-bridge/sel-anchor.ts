// The security log's head, anchored outside the log (SEL truncation detection): the bridge
// polls the head every few seconds while the gateway runs and writes it atomically to
// <home>/sel_anchor.json, and once more on shutdown. The anchor only moves forward, and only
// over a log that still holds the anchored row with the anchored mac: a log cut and written
// on (`forked`) or cut (`truncated`) never carries the anchor with it, so `verify` keeps
// failing however many rows follow. A missing or unreadable anchor is never silently
// recreated: start records it (sel_anchor_unacknowledged.json, a security-log row) and doctor
// fails until the owner runs `personalclaw security acknowledge`.
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import {
  SecurityLogAnchorSchema,
  SecurityLogHeadAnswerSchema,
  type SecurityLogAnchor,
  type AnchorStanding,
} from "../kernel/contracts/security-event";
import { writePrivateFile } from "./private-file";
import { readPrivateRecordFile } from "./private-record";

export const ANCHOR_INTERVAL_MS = 2_000;

export type AnchorFile =
  { state: "ok"; anchor: SecurityLogAnchor } | { state: "missing" } | { state: "unreadable"; reason: string };

/** Reads the anchor file, telling a missing file from one that cannot be read or parsed. */
export function readAnchorFile(path: string): AnchorFile {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "ENOENT" ? { state: "missing" } : { state: "unreadable", reason: code ?? String(error) };
  }
  try {
    const parsed = SecurityLogAnchorSchema.safeParse(JSON.parse(text));
    return parsed.success
      ? { state: "ok", anchor: parsed.data }
      : { state: "unreadable", reason: "not an anchor ({seq, mac})" };
  } catch {
    return { state: "unreadable", reason: "not JSON" };
  }
}

export function readAnchor(path: string): SecurityLogAnchor | null {
  const file = readAnchorFile(path);
  return file.state === "ok" ? file.anchor : null;
}

/** <home>/sel_anchor_unacknowledged.json: the anchor was lost at some start and the owner has not said they know. */
export const UnacknowledgedAnchorSchema = z.object({ since: z.string(), reason: z.string() });
export type UnacknowledgedAnchor = z.infer<typeof UnacknowledgedAnchorSchema>;

export function unacknowledgedAnchorPath(home: string): string {
  return join(home, "sel_anchor_unacknowledged.json");
}

export function readUnacknowledgedAnchor(home: string): UnacknowledgedAnchor | null {
  const read = readPrivateRecordFile(unacknowledgedAnchorPath(home), UnacknowledgedAnchorSchema);
  if (read.found === "none") return null;
  return read.found === "record" ? read.value : { since: "unknown", reason: "the record of it is unreadable" };
}

export function recordUnacknowledgedAnchor(home: string, reason: string): UnacknowledgedAnchor {
  const record = readUnacknowledgedAnchor(home) ?? { since: new Date().toISOString(), reason };
  writePrivateFile(unacknowledgedAnchorPath(home), `${JSON.stringify(record)}\n`);
  return record;
}

export function clearUnacknowledgedAnchor(home: string): void {
  rmSync(unacknowledgedAnchorPath(home), { force: true });
}

/** The gateway route answering the log's head and where the log stands against `held`. */
export function headPath(held: SecurityLogAnchor | null): string {
  return `/api/internal/sel/head${held ? `?anchor_seq=${held.seq}&anchor_mac=${held.mac}` : ""}`;
}

/** Keeps the anchor file current; `flush()` writes the latest head now. `readHead(anchor)` answers the head and its standing against `anchor`. */
export function startAnchorWriter(
  path: string,
  readHead: (anchor: SecurityLogAnchor | null) => Promise<unknown>,
  log: (line: string) => void,
) {
  let last = readAnchor(path);
  let refusedStanding: AnchorStanding | null = null;
  const flush = async () => {
    const parsed = SecurityLogHeadAnswerSchema.safeParse(await readHead(last));
    if (!parsed.success) return;
    const { seq, mac, standing } = parsed.data;
    if (last && last.seq === seq && last.mac === mac) return;
    // An anchor never moves backwards, and never over a log that no longer holds it: a head
    // below it, or a rewritten row at its seq, is exactly what verification must catch.
    if (last && (seq < last.seq || standing !== "extends")) {
      if (refusedStanding !== standing)
        log(
          `warning sel anchor: the security log is ${standing ?? "behind"} against the anchor (seq ${last.seq}); the anchor stays where it is and verify fails`,
        );
      refusedStanding = standing ?? "truncated";
      return;
    }
    last = { seq, mac };
    writePrivateFile(path, `${JSON.stringify(last)}\n`);
  };
  const timer = setInterval(() => {
    flush().catch((error) => log(`sel anchor: ${error instanceof Error ? error.message : String(error)}`));
  }, ANCHOR_INTERVAL_MS);
  timer.unref();
  return {
    flush,
    stop: () => clearInterval(timer),
  };
}
