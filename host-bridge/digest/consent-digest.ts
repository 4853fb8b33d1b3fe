// The consent digest binds the owner's yes to exact bytes and exact words: the canonical
// listing of the staged tree AND the review they were shown. Any changed byte, link, mode
// class or review line gives another digest, so a stale consent cannot install new content.
import { createHash } from "node:crypto";
import { canonicalJson } from "../../kernel/crypto/canonical-json";
import type { ListingEntry } from "./canonical-listing";

const DIGEST_FORMAT = "personalclaw-consent-v1";

/** sha256 over the listing and the review (its own `digest` field excluded), as "sha256:<hex>". */
export function consentDigest(listing: readonly ListingEntry[], review: Record<string, unknown>): string {
  const { digest: _excluded, ...reviewWithoutDigest } = review;
  void _excluded;
  const body = canonicalJson({ format: DIGEST_FORMAT, listing, review: reviewWithoutDigest });
  return `sha256:${createHash("sha256").update(body, "utf8").digest("hex")}`;
}
