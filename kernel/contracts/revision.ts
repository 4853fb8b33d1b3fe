// Whole-document writes are revision-guarded (CONV-08): a read returns `revision`, a write
// must send If-Match with it, so two editors never silently overwrite each other.
import { canonicalJson } from "../crypto/canonical-json";
import { GatewayError } from "./errors";
import { hexOf } from "../crypto/hex";

/** The revision of a document: a digest of its editable content only. */
export async function revisionOf(document: unknown): Promise<string> {
  const bytes = new TextEncoder().encode(canonicalJson(document));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return hexOf(digest.subarray(0, 12));
}

// An entity tag is quoted by RFC 9110, but a client that sends the revision it read as it read
// it (`If-Match: 3fa9...`) named that revision just as plainly: it is read as the tag it names,
// never answered "send If-Match" when it did.
const IF_MATCH = /^\s*(?:W\/)?(?:"([0-9a-f]+)"|([0-9a-f]+))\s*$/;

/** The revision an If-Match header names, quoted or not; undefined when it names none. */
export function revisionNamedBy(ifMatch: string | null | undefined): string | undefined {
  const match = IF_MATCH.exec(ifMatch ?? "");
  return match ? (match[1] ?? match[2]) : undefined;
}

/** Reads the revision a write is based on from If-Match; 428 `revision_required` without one. */
export function requireIfMatch(ifMatch: string | null | undefined): string {
  const revision = revisionNamedBy(ifMatch);
  if (revision === undefined) throw new GatewayError("revision_required");
  return revision;
}
