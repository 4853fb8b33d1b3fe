// Verifies the signature an .mcpb bundle may end with (issue 36): the PKCS#7 (CMS) SignedData
// `mcpb sign` appends, detached, over every byte of the bundle before its signature block, with
// signed attributes whose message digest is the SHA-256 of those bytes. MCPB's own verifier
// reads every bundle as "unsigned" (node-forge implements no PKCS#7 verification, and its
// catch-all turns any failure into "unsigned"); here the outcome is stated as it is:
// - the signature does not verify over these bytes, or the block is not a detached signature of
//   them: refused, mcpb_signature_invalid naming why. A bundle changed after signing never
//   installs as "signed";
// - it verifies and the signer's certificate chains to an authority of the system's trust store
//   or the owner's egress.extra_ca_certs, valid now, for code signing: "verified", by whom;
// - it verifies but no trusted authority vouches for the signer (self-signed, an unknown or
//   expired authority, not for code signing): "untrusted", shown with the reason and the signer's
//   own claim, never refused: an unsigned bundle installs too, and this one is no less proven.
// pkijs (with asn1js) parses the CMS and checks the signature and the chain with WebCrypto; what
// it does not check, the extended key usage, is checked here. Revocation is not checked.
import { webcrypto, X509Certificate } from "node:crypto";
import * as asn1js from "asn1js";
import {
  Certificate,
  CertificateChainValidationEngine,
  ContentInfo,
  CryptoEngine,
  id_ContentType_Data,
  id_ContentType_SignedData,
  id_ExtKeyUsage,
  setEngine,
  SignedData,
} from "pkijs";
import { GatewayError } from "../../kernel/contracts/errors";
import type { McpbSignature } from "../../kernel/contracts/mcpb-bundle";
import { loadOriginTrust } from "../egress/origin-tls";

const CODE_SIGNING = "1.3.6.1.5.5.7.3.3";
const ANY_EXTENDED_KEY_USAGE = "2.5.29.37.0";

setEngine("personalclaw", new CryptoEngine({ name: "personalclaw", crypto: webcrypto as unknown as Crypto }));

const invalid = (reason: string) => new GatewayError("mcpb_signature_invalid", { vars: { reason } });

/** The authorities a signer's certificate may chain to: the system's trust store and the owner's extra ones. */
export interface SignatureTrust {
  anchors: readonly Certificate[];
  /** What was read, for the review's words and the log. */
  notes: readonly string[];
}

/** The trust store an egress broker verifies origins against, read for a signature: one rule for what the owner trusts. */
export function signatureTrustOf(extraCaFile: string, systemCaFile: string | undefined): SignatureTrust {
  const { ca, notes } = loadOriginTrust({ extraCaFile, systemCaFile });
  const anchors: Certificate[] = [];
  for (const pem of ca) {
    try {
      anchors.push(Certificate.fromBER(new X509Certificate(pem).raw));
    } catch {
      // An authority pkijs cannot read vouches for no bundle here; the others still do.
    }
  }
  return { anchors, notes };
}

function arrayBufferOf(bytes: Uint8Array): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

/** The SignedData of the block, refused unless it is one detached signature of plain data. */
function signedDataOf(pkcs7: Buffer): SignedData {
  let signed: SignedData;
  try {
    const info = new ContentInfo({ schema: asn1js.fromBER(arrayBufferOf(pkcs7)).result });
    if (info.contentType !== id_ContentType_SignedData) throw invalid("its signature block is not a CMS SignedData");
    signed = new SignedData({ schema: info.content });
  } catch (error) {
    if (error instanceof GatewayError) throw error;
    throw invalid("its signature block is not readable PKCS#7");
  }
  if (signed.signerInfos.length !== 1) throw invalid(`its signature has ${signed.signerInfos.length} signers, not one`);
  if (signed.encapContentInfo.eContent !== undefined)
    throw invalid("its signature carries content of its own instead of signing the bundle's bytes");
  if (signed.encapContentInfo.eContentType !== id_ContentType_Data)
    throw invalid("its signature is not over plain data");
  return signed;
}

/** Why a signer's certificate may not sign code (its extended key usage names other purposes), or null. */
function notForCodeSigning(certificate: Certificate): string | null {
  const usage = certificate.extensions?.find((e) => e.extnID === id_ExtKeyUsage)?.parsedValue as
    { keyPurposes?: string[] } | undefined;
  const purposes = usage?.keyPurposes;
  if (purposes === undefined || purposes.includes(CODE_SIGNING) || purposes.includes(ANY_EXTENDED_KEY_USAGE))
    return null;
  return "its certificate is not for code signing (extended key usage)";
}

/** Who signed, as the certificate names them: its subject, issuer, SHA-256 fingerprint and validity. */
function signerOf(certificate: Certificate): Omit<McpbSignature, "state" | "reason"> {
  const x509 = new X509Certificate(Buffer.from(certificate.toSchema().toBER(false)));
  const oneLine = (name: string) => name.split("\n").join(", ").slice(0, 500);
  return {
    subject: oneLine(x509.subject),
    issuer: oneLine(x509.issuer),
    fingerprint: x509.fingerprint256,
    validFrom: new Date(x509.validFrom).toISOString(),
    validTo: new Date(x509.validTo).toISOString(),
  };
}

/**
 * The signature's state for `signedBytes` (the bundle before its block): verified or untrusted,
 * with the signer; throws mcpb_signature_invalid when it does not sign exactly these bytes.
 */
export async function verifyMcpbSignature(
  signedBytes: Buffer,
  pkcs7: Buffer,
  trust: SignatureTrust,
  now: Date = new Date(),
): Promise<McpbSignature> {
  const signed = signedDataOf(pkcs7);
  let signer: Certificate | null | undefined;
  try {
    const result = await signed.verify({ signer: 0, data: arrayBufferOf(signedBytes), extendedMode: true });
    signer = result.signerCertificate;
    if (result.signatureVerified !== true) throw invalid("its signature does not verify with its signer's key");
  } catch (error) {
    if (error instanceof GatewayError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw invalid(
      /digest/i.test(message)
        ? "the bundle's bytes are not the bytes that were signed"
        : `its signature does not verify (${message.slice(0, 200)})`,
    );
  }
  if (!signer) throw invalid("its signature names no certificate it carries");
  const who = signerOf(signer);
  const notCode = notForCodeSigning(signer);
  if (notCode) return { state: "untrusted", ...who, reason: notCode };
  const chain = new CertificateChainValidationEngine({
    trustedCerts: [...trust.anchors],
    certs: [...(signed.certificates ?? []).filter((c): c is Certificate => c instanceof Certificate)],
    checkDate: now,
  });
  const verdict = await chain.verify().catch((error: unknown) => ({
    result: false,
    resultMessage: error instanceof Error ? error.message : String(error),
  }));
  if (verdict.result) return { state: "verified", ...who };
  return {
    state: "untrusted",
    ...who,
    reason: `no authority you trust vouches for its certificate (${String(verdict.resultMessage).slice(0, 200)})`,
  };
}
