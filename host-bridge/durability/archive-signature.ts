// The archive's manifest is signed with the security log's checkpoint key (Ed25519), the key
// whose verifier key the log publishes with every checkpoint: whoever holds that verifier key
// checks an archive offline, without the passphrase, and a changed byte anywhere is found.
import { createPrivateKey, createPublicKey, sign, verify } from "node:crypto";
import { canonicalJson } from "../../kernel/crypto/canonical-json";
import { parseVerifierKey } from "../../kernel/chain/checkpoint";
import type { Envelope, Manifest } from "./archive-format";

function signedBytes(manifest: Manifest): Buffer {
  return Buffer.from(`personalclaw backup manifest v1\n${canonicalJson(manifest)}`, "utf8");
}

/** Signs with the log's private key as the log keeps it (PKCS#8, base64). */
export function signManifest(manifest: Manifest, signingPkcs8: string): string {
  const key = createPrivateKey({ key: Buffer.from(signingPkcs8, "base64"), format: "der", type: "pkcs8" });
  return sign(null, signedBytes(manifest), key).toString("base64");
}

/** The raw public key of a PKCS#8 Ed25519 private key, base64. */
export function publicRawOf(signingPkcs8: string): string {
  const key = createPrivateKey({ key: Buffer.from(signingPkcs8, "base64"), format: "der", type: "pkcs8" });
  const jwk = createPublicKey(key).export({ format: "jwk" });
  return Buffer.from(String(jwk.x), "base64url").toString("base64");
}

/** True when the signature verifies under the checkpoint's own verifier key. */
export function manifestSignatureHolds(envelope: Envelope): boolean {
  const vkey = parseVerifierKey(envelope.manifest.log.checkpoint.public_key);
  if (vkey === null || vkey.type !== "note") return false;
  try {
    const key = createPublicKey({
      key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(vkey.publicRaw).toString("base64url") },
      format: "jwk",
    });
    return verify(null, signedBytes(envelope.manifest), key, Buffer.from(envelope.signature, "base64"));
  } catch {
    return false;
  }
}

/** The verifier key's raw public key, base64 (to compare with the log's own key once opened). */
export function verifierRaw(vkey: string): string | null {
  const parsed = parseVerifierKey(vkey);
  return parsed === null ? null : Buffer.from(parsed.publicRaw).toString("base64");
}
