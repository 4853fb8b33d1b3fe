// The signature an .mcpb bundle ends with is verified for real (issue 36), end to end: a CA made
// for the run is the owner's egress.extra_ca_certs, a publisher's code-signing certificate signed
// by it signs a bundle as `mcpb sign` signs one (a detached CMS SignedData, openssl here), and
// the real `personalclaw apps add` shows who signed it and whether an authority the owner trusts
// vouches for them; a bundle changed after signing is refused and nothing is written.
//
// Homes live under /var/tmp, not /tmp: the sandbox gives every child a private /tmp.
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, startGateway, type RunningGateway } from "./helpers/gateway";
import { packMcpb, signMcpb } from "./helpers/mcpb-pack";
import { makeCodeSigningCertificate, makeTestCertificates, type TestCertificates } from "./helpers/test-ca";

const APP = "pc-signed";

const MANIFEST = {
  manifest_version: "0.3",
  name: APP,
  version: "1.0.0",
  description: "A signed bundle",
  author: { name: "Signed Publisher" },
  server: { type: "node", entry_point: "server/index.js" },
};

describe("apps add <bundle>.mcpb verifies the bundle's signature against the authorities the owner trusts", () => {
  let root: string;
  let ownerHome: string;
  let home: string;
  let ca: TestCertificates;
  let unsigned: Buffer;
  let gw: RunningGateway;
  const cli = (args: string[], timeoutMs = 180_000) =>
    runCli([...args, "--home", home], { HOME: ownerHome }, timeoutMs);
  const bundleFile = (name: string, bytes: Buffer) => {
    const path = join(root, name);
    writeFileSync(path, bytes);
    return path;
  };
  const lastJson = (stdout: string) => JSON.parse(stdout.trim().split("\n").at(-1)!);

  beforeAll(async () => {
    root = mkdtempSync("/var/tmp/pc-mcpb-signature-");
    ownerHome = join(root, "owner");
    home = join(ownerHome, ".personalclaw");
    mkdirSync(home, { recursive: true });
    ca = makeTestCertificates({ names: ["localhost"] });
    writeFileSync(join(home, "config.json"), JSON.stringify({ egress: { extra_ca_certs: ca.caPath } }));
    unsigned = packMcpb(MANIFEST, { "server/index.js": { data: "process.stdin.resume();\n" } });
    gw = await startGateway({ home, env: { HOME: ownerHome } });
  }, 90_000);

  afterAll(async () => {
    await gw?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
    if (ca) rmSync(ca.dir, { recursive: true, force: true });
  });

  it("a bundle signed by a publisher the owner's authority vouches for shows the signer, verified, and installs so", async () => {
    const publisher = makeCodeSigningCertificate(ca, "Signed Publisher Ltd");
    const path = bundleFile("trusted.mcpb", signMcpb(unsigned, publisher));
    const shown = await cli(["apps", "add", path]);
    expect(shown.code, shown.stderr).toBe(1);
    expect(shown.stderr).toContain(
      "Signature: signed by CN=Signed Publisher Ltd, verified: the signature covers every byte of the bundle, and its certificate chains to an authority you trust",
    );
    expect(shown.stderr).toContain("Signer's certificate: issued by CN=PersonalClaw test CA");
    // The summary both reviews open the source with.
    expect(shown.stderr).toContain(`Where it comes from: .mcpb bundle ${APP} 1.0.0\n`);
    expect(shown.stderr).toContain(
      "  Publisher: CN=Signed Publisher Ltd, whose signature is verified (the bundle says Signed Publisher)\n",
    );
    expect(shown.stderr).toMatch(
      / {2}Pinned: the bundle by its sha256 \([0-9.]+ KiB\): 2 files, [0-9.]+ KiB unpacked\n/,
    );
    expect(shown.stderr).toContain("  Native code: not known for this source\n");
    expect(shown.stderr).toContain("  Signature: signed by CN=Signed Publisher Ltd, verified\n");
    expect(shown.stderr).not.toContain("Why it is not trusted");
    const added = await cli(["apps", "add", path, "--yes"]);
    expect(added.code, added.stderr).toBe(0);
    const record = JSON.parse(readFileSync(join(home, "apps", APP, "mcpb-bundle.json"), "utf8"));
    expect(record.signature).toBe("verified");
    expect(record.signer.subject).toBe("CN=Signed Publisher Ltd");
    expect((await cli(["apps", "uninstall", APP, "--purge-data"])).code).toBe(0);
  }, 300_000);

  it("one byte of the signed content changed after signing is refused with mcpb_signature_invalid, nothing written", async () => {
    const signed = signMcpb(unsigned, makeCodeSigningCertificate(ca, "Signed Publisher Ltd"));
    // One byte of the first entry's modification time in the central directory: the zip still reads, its bytes differ.
    const central = signed.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    signed[central + 12] = signed[central + 12]! ^ 0x01;
    const refused = await cli(["apps", "add", bundleFile("changed.mcpb", signed), "--yes", "--json"]);
    expect(refused.code).not.toBe(0);
    const envelope = lastJson(refused.stdout);
    expect(envelope.error.code).toBe("mcpb_signature_invalid");
    expect(envelope.error.message).toContain("not the bytes that were signed");
    expect(readdirSync(join(home, "apps")).filter((name) => name === APP)).toEqual([]);
  }, 120_000);

  it("a signer no trusted authority vouches for is shown as untrusted, with why, and not refused", async () => {
    const stranger = makeCodeSigningCertificate(null, "Self Signed Stranger");
    const shown = await cli(["apps", "add", bundleFile("untrusted.mcpb", signMcpb(unsigned, stranger))]);
    expect(shown.code, shown.stderr).toBe(1);
    expect(shown.stderr).toContain("Signature: signed by CN=Self Signed Stranger, untrusted:");
    expect(shown.stderr).toContain("  Publisher: Signed Publisher, as the bundle states it (not proven)\n");
    expect(shown.stderr).toContain("Why it is not trusted: no authority you trust vouches for its certificate");
    expect(shown.stderr).toContain("consent_required");
    const unsignedShown = await cli(["apps", "add", bundleFile("unsigned.mcpb", unsigned)]);
    expect(unsignedShown.stderr).toContain("Signature: unsigned: the bundle carries no signature");
  }, 120_000);
});
