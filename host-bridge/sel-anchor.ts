// The security log's head, anchored outside the log (SEL truncation detection): the bridge
// polls the head every few seconds while the gateway runs and writes it atomically to
// <home>/sel_anchor.json, and once more on shutdown. Verification fails when the log no
// longer holds the anchored row with the anchored mac.
import { readFileSync } from "node:fs";
import { SecurityLogAnchorSchema, SecurityLogHeadSchema, type SecurityLogAnchor } from "../workers/contracts/security-event";
import { writePrivateFile } from "./private-file";

export const ANCHOR_INTERVAL_MS = 2_000;

export function readAnchor(path: string): SecurityLogAnchor | null {
  try {
    const parsed = SecurityLogAnchorSchema.safeParse(JSON.parse(readFileSync(path, "utf8")));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** Keeps the anchor file current; `flush()` writes the latest head now. */
export function startAnchorWriter(path: string, readHead: () => Promise<unknown>, log: (line: string) => void) {
  let last = readAnchor(path);
  const flush = async () => {
    const parsed = SecurityLogHeadSchema.safeParse(await readHead());
    if (!parsed.success) return;
    const { seq, mac } = parsed.data;
    if (last && last.seq === seq && last.mac === mac) return;
    // An anchor never moves backwards: a head below it is exactly what verification must catch.
    if (last && seq < last.seq) return;
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
