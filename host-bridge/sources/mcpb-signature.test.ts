// The .mcpb signature verifier against signatures made by openssl (a child process, hence the
// integration tier): what it proves, what it refuses, and the forms a hostile block takes.
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Certificate } from "pkijs";
import { X509Certificate } from "node:crypto";
import { appendSignatureBlock, packMcpb, signMcpb } from "../../test/helpers/mcpb-pack";
import {
  makeCodeSigningCertificate,
  makeIntermediateCa,
  makeTestCertificates,
  type SignerFiles,
  type TestCertificates,
} from "../../test/helpers/test-ca";
import { refusal } from "../../test/helpers/refusals";
import { splitSignatureBlock } from "./mcpb-archive";
import { verifyMcpbSignature, type SignatureTrust } from "./mcpb-signature";

const BUNDLE = packMcpb({ manifest_version: "0.3", name: "signed" }, { "server/index.js": { data: "1;\n" } });

/** The block a signed bundle ends with, verified over the bytes before it. */
function verify(signed: Buffer, trust: SignatureTrust, now?: Date) {
  const { zip, block } = splitSignatureBlock(signed);
  return verifyMcpbSignature(zip, block!, trust, now);
}

describe("an .mcpb signature is verified over the bundle's bytes and chained to the owner's authorities", () => {
  let ca: TestCertificates;
  let trust: SignatureTrust;
  let publisher: SignerFiles;
  const dirs: string[] = [];

  beforeAll(() => {
    ca = makeTestCertificates({ names: ["localhost"] });
    trust = { anchors: [Certificate.fromBER(new X509Certificate(ca.caPem).raw)], notes: [] };
    publisher = makeCodeSigningCertificate(ca, "Publisher");
    dirs.push(ca.dir);
  });
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it("a signer the trusted authority issued is verified; through an intermediate the block carries too", async () => {
    expect(await verify(signMcpb(BUNDLE, publisher), trust)).toMatchObject({
      state: "verified",
      subject: "CN=Publisher",
      issuer: "CN=PersonalClaw test CA",
    });
    const intermediate = makeIntermediateCa(ca, "Intermediate");
    dirs.push(intermediate.dir);
    const viaIntermediate = makeCodeSigningCertificate(intermediate, "Far Publisher");
    const signed = signMcpb(BUNDLE, viaIntermediate, { chain: intermediate.caPath });
    expect(await verify(signed, trust)).toMatchObject({ state: "verified", issuer: "CN=Intermediate" });
    // Without the intermediate in the block, no path reaches the authority.
    expect((await verify(signMcpb(BUNDLE, viaIntermediate), trust)).state).toBe("untrusted");
  });

  it("a certificate for another purpose, one expired by the day it is checked, or no authority at all is untrusted", async () => {
    const server = makeCodeSigningCertificate(ca, "Web Server", { purpose: "serverAuth" });
    expect(await verify(signMcpb(BUNDLE, server), trust)).toMatchObject({
      state: "untrusted",
      reason: "its certificate is not for code signing (extended key usage)",
    });
    const later = new Date(Date.now() + 30 * 86_400_000);
    expect((await verify(signMcpb(BUNDLE, publisher), trust, later)).state).toBe("untrusted");
    expect((await verify(signMcpb(BUNDLE, publisher), { anchors: [], notes: [] })).state).toBe("untrusted");
  });

  it("refuses a block that does not sign exactly these bytes, naming why", async () => {
    const signed = signMcpb(BUNDLE, publisher);
    const { zip, block } = splitSignatureBlock(signed);
    const changed = Buffer.from(zip);
    changed[10] = changed[10]! ^ 0x01;
    const cases: Array<[() => Promise<unknown>, string]> = [
      [() => verifyMcpbSignature(changed, block!, trust), "not the bytes that were signed"],
      // A signature of other content, carried inside the block, says nothing of the bundle.
      [() => verify(signMcpb(BUNDLE, publisher, { attached: true }), trust), "carries content of its own"],
      [
        () => verify(signMcpb(BUNDLE, publisher, { also: makeCodeSigningCertificate(ca, "Second") }), trust),
        "2 signers",
      ],
      [() => verify(appendSignatureBlock(BUNDLE, Buffer.from([0x30, 0x03, 0x02, 0x01, 0x01])), trust), "not readable"],
    ];
    for (const [verdict, words] of cases) {
      const error = await refusal(verdict());
      expect(error.code).toBe("mcpb_signature_invalid");
      expect(error.message).toContain(words);
    }
  });
});
