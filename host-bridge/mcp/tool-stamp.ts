// The host's side of the tool stamp (kernel/contracts/mcp-tools.ts): a local start empties its
// folder before workerd starts, so a stamp never outlives the gateway that wrote it, and
// `mcp run` reads it before each call it may answer from a kept verdict.
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { TOOL_STAMP_FILE } from "../../kernel/contracts/mcp-tools";

/** Empties the stamp's folder (made 0700 when missing): until the AppRegistry writes one, no verdict is kept. */
export function resetToolStamp(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true, mode: 0o700 });
}

/** The stamp's value now, or null when there is none (no local gateway wrote one since it started). */
export function readToolStamp(dir: string): string | null {
  try {
    const value = readFileSync(join(dir, TOOL_STAMP_FILE), "utf8");
    return value.length > 0 ? value : null;
  } catch {
    return null;
  }
}
