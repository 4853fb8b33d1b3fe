// The tool stamp (kernel/contracts/mcp-tools.ts): after a change a call's verdict reads, the
// AppRegistry writes a fresh random value through the TOOL_STAMP disk service before it
// answers, so a `mcp run` that kept an `allow` sees the file change before the change's author
// hears it is done. Only a local start binds the service; without it (on Cloudflare) nothing is
// written and `mcp run` finds no stamp, so it keeps nothing and asks before every call.
import { TOOL_STAMP_FILE } from "../../kernel/contracts/mcp-tools";

/** Rewrites the stamp; a refused write is logged, and kept verdicts then end at TOOL_VERDICT_KEPT_MS. */
export async function publishToolStamp(stamps: Fetcher | undefined): Promise<void> {
  if (stamps === undefined) return;
  try {
    const written = await stamps.fetch(`http://tool-stamp/${TOOL_STAMP_FILE}`, {
      method: "PUT",
      body: crypto.randomUUID(),
    });
    if (!written.ok) console.error(`tool stamp: the write was refused (${written.status})`);
  } catch (error) {
    console.error(`tool stamp: the write failed (${String(error)})`);
  }
}
