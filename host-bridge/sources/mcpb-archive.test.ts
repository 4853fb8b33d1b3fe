import { zipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { appendSignatureBlock, packMcpb } from "../../test/helpers/mcpb-pack";
import { MCPB_CAPS, readMcpbArchive, type McpbCaps } from "./mcpb-archive";
import { refusal } from "../../test/helpers/refusals";

const MANIFEST = { manifest_version: "0.3", name: "x" };

/** A zip of one file written with fflate as a hostile tool would, with the entry options given. */
function oneEntry(name: string, data: string, options: { os?: number; attrs?: number; level?: 0 | 9 } = {}): Buffer {
  const { level = 9, ...attributes } = options;
  return Buffer.from(zipSync({ [name]: [Buffer.from(data), { os: 3, ...attributes }] }, { level }));
}

/** Sets the uncompressed size every header of the (one-entry) zip declares. */
function declareSize(zip: Buffer, size: number): Buffer {
  const out = Buffer.from(zip);
  for (let at = 0; at + 4 <= out.length; at++) {
    const signature = out.readUInt32LE(at);
    if (signature === 0x04034b50) out.writeUInt32LE(size, at + 22);
    if (signature === 0x02014b50) out.writeUInt32LE(size, at + 24);
  }
  return out;
}

describe("reading an .mcpb bundle's files", () => {
  it("a bundle packed like the official packer reads back every file, with its executable bit", async () => {
    const bundle = packMcpb(MANIFEST, {
      "server/index.js": { data: "console.log(1);\n" },
      "server/run": { data: "#!/bin/sh\n", mode: 0o755 },
      "node_modules/a/package.json": { data: '{"name":"a"}' },
    });
    const archive = await readMcpbArchive(bundle);
    expect(archive.signed).toBeNull();
    const files = Object.fromEntries(archive.files.map((f) => [f.path, f]));
    expect(Object.keys(files).sort()).toEqual([
      "manifest.json",
      "node_modules/a/package.json",
      "server/index.js",
      "server/run",
    ]);
    expect(files["server/index.js"]!.bytes.toString()).toBe("console.log(1);\n");
    expect(files["server/run"]!.executable).toBe(true);
    expect(files["server/index.js"]!.executable).toBe(false);
    expect(archive.unpackedBytes).toBe(archive.files.reduce((sum, f) => sum + f.bytes.length, 0));
  });

  it("leaves out what is never installed (.git, __pycache__, venv) as staging does", async () => {
    const bundle = packMcpb(MANIFEST, { ".git/config": { data: "[core]" }, "server/__pycache__/a.pyc": { data: "x" } });
    const archive = await readMcpbArchive(bundle);
    expect(archive.files.map((f) => f.path)).toEqual(["manifest.json"]);
  });

  it("an entry whose name climbs out of the bundle (../) is refused with mcpb_entry_refused", async () => {
    const error = await refusal(readMcpbArchive(oneEntry("../outside.js", "x")));
    expect(error.code).toBe("mcpb_entry_refused");
    expect(error.message).toContain("../outside.js");
    expect((await refusal(readMcpbArchive(oneEntry("server/../../x", "x")))).code).toBe("mcpb_entry_refused");
  });

  it("an absolute entry, a drive-letter entry and a backslash name are refused", async () => {
    for (const name of ["/etc/cron.d/x", "C:/x.js", "server\\..\\x"])
      expect((await refusal(readMcpbArchive(oneEntry(name, "x")))).code).toBe("mcpb_entry_refused");
  });

  it("a symbolic-link entry is refused, whatever it points at", async () => {
    const link = oneEntry("server/index.js", "/etc/passwd", { attrs: (0o120777 << 16) >>> 0 });
    const error = await refusal(readMcpbArchive(link));
    expect(error.code).toBe("mcpb_entry_refused");
    expect(error.message).toContain("symbolic link");
  });

  it("a device or pipe entry is refused", async () => {
    const fifo = oneEntry("server/pipe", "", { attrs: (0o010644 << 16) >>> 0 });
    expect((await refusal(readMcpbArchive(fifo))).code).toBe("mcpb_entry_refused");
  });

  it("two names one filesystem reads as the same file are refused", async () => {
    const bundle = packMcpb(MANIFEST, { "server/A.js": { data: "1" }, "server/a.js": { data: "2" } });
    expect((await refusal(readMcpbArchive(bundle))).code).toBe("mcpb_entry_refused");
  });

  it("a bundle that unpacks past the total cap is refused with mcpb_too_large", async () => {
    const caps: McpbCaps = { ...MCPB_CAPS, maxTotalBytes: 1000 };
    const bundle = packMcpb(MANIFEST, { "big.txt": { data: "a".repeat(5000) } });
    expect((await refusal(readMcpbArchive(bundle, caps))).code).toBe("mcpb_too_large");
    expect((await refusal(readMcpbArchive(bundle, { ...MCPB_CAPS, maxFileBytes: 1000 }))).code).toBe("mcpb_too_large");
    expect((await refusal(readMcpbArchive(bundle, { ...MCPB_CAPS, maxEntries: 1 }))).code).toBe("mcpb_too_large");
    expect((await refusal(readMcpbArchive(bundle, { ...MCPB_CAPS, maxBundleBytes: 100 }))).code).toBe("mcpb_too_large");
  });

  it("an entry that inflates past the size its headers declare (a zip bomb's lie) is refused", async () => {
    const bomb = declareSize(oneEntry("server/index.js", "a".repeat(100_000)), 10);
    const error = await refusal(readMcpbArchive(bomb));
    expect(error.code).toBe("mcpb_entry_refused");
    expect(error.message).toContain("server/index.js");
  });

  it("bytes that do not match the entry's CRC-32 are refused", async () => {
    const stored = oneEntry("server/index.js", "console.log('hello');", { level: 0 });
    const at = stored.indexOf("hello");
    stored[at] = "j".charCodeAt(0);
    const error = await refusal(readMcpbArchive(stored));
    expect(error.code).toBe("mcpb_entry_refused");
    expect(error.message).toContain("CRC-32");
  });

  it("a file that is not a zip is refused with mcpb_archive_invalid", async () => {
    expect((await refusal(readMcpbArchive(Buffer.from("not a zip at all")))).code).toBe("mcpb_archive_invalid");
  });

  it("a signature block appended as mcpb sign appends one is split off: the bytes before it and its PKCS#7", async () => {
    const zip = packMcpb(MANIFEST, {});
    const bundle = appendSignatureBlock(zip, Buffer.from("0\x82 pkcs7 bytes"));
    const archive = await readMcpbArchive(bundle);
    expect(archive.signed!.zip.equals(zip)).toBe(true);
    expect(archive.signed!.block.toString()).toBe("0\x82 pkcs7 bytes");
    expect(archive.files.map((f) => f.path)).toEqual(["manifest.json"]);
  });

  it("a signature block whose framing does not add up is refused", async () => {
    const bundle = appendSignatureBlock(packMcpb(MANIFEST, {}), Buffer.from("pkcs7"));
    bundle.writeUInt32LE(999, bundle.length - "MCPB_SIG_END".length - 5 - 4);
    expect((await refusal(readMcpbArchive(bundle))).code).toBe("mcpb_archive_invalid");
  });
});
