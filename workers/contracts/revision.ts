// Whole-document writes are revision-guarded (CONV-08): a read returns `revision`, a write
// must send If-Match with it, so two editors never silently overwrite each other.
import { canonicalJson } from "./canonical-json";
import { GatewayError } from "./errors";
import { hexOf } from "./hex";

/** The revision of a document: a digest of its editable content only. */
export async function revisionOf(document: unknown): Promise<string> {
  const bytes = new TextEncoder().encode(canonicalJson(document));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return hexOf(digest.subarray(0, 12));
}

/** Reads the revision a write is based on from If-Match; 428 `revision_required` without one. */
export function requireIfMatch(ifMatch: string | null | undefined): string {
  const match = /^\s*(?:W\/)?"([0-9a-f]+)"\s*$/.exec(ifMatch ?? "");
  if (!match) throw new GatewayError("revision_required");
  return match[1];
}
