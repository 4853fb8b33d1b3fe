// Packs an .mcpb bundle the way the official packer (`mcpb pack`, @anthropic-ai/mcpb's
// src/cli/pack.ts) does: fflate's zipSync at level 9, every file with os 3 (unix) and its
// permission bits in the external attributes. The packer is not reachable offline; its zip
// library is. Hostile variants (a link entry, a name that climbs out) are written with the same
// library, as an attacker's tool would write them.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { zipSync, type Zippable } from "fflate";
import { NPM_FIXTURES, tarballFile } from "./npm-registry";
import type { SignerFiles } from "./test-ca";

export interface PackedFile {
  data: Uint8Array | string;
  /** Permission bits (0o644 by default); a link entry gives its type bits too (0o120777). */
  mode?: number;
}

/** A fixed time, so the same files always pack to the same bytes. */
const MTIME = new Date("2025-06-01T00:00:00Z");

/** The bundle's bytes: `files` by '/'-separated path, `manifest` as manifest.json. */
export function packMcpb(manifest: unknown, files: Record<string, PackedFile>): Buffer {
  const zippable: Zippable = {
    "manifest.json": [Buffer.from(JSON.stringify(manifest, null, 2)), { os: 3, attrs: 0o644 << 16 }],
  };
  for (const [path, file] of Object.entries(files)) {
    const data = typeof file.data === "string" ? Buffer.from(file.data) : file.data;
    const mode = file.mode ?? 0o644;
    // The packer writes the permission bits alone; a mode with type bits (a link) keeps them.
    zippable[path] = [data, { os: 3, attrs: ((mode > 0o7777 ? mode : mode & 0o777) << 16) >>> 0 }];
  }
  return Buffer.from(zipSync(zippable, { level: 9, mtime: MTIME }));
}

/** Every file under `dir` as packer input, with its permission bits, paths prefixed by `prefix`. */
export function filesUnder(dir: string, prefix: string): Record<string, PackedFile> {
  const out: Record<string, PackedFile> = {};
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const stat = statSync(path);
    if (stat.isDirectory()) Object.assign(out, filesUnder(path, `${prefix}${name}/`));
    else out[`${prefix}${name}`] = { data: readFileSync(path), mode: stat.mode & 0o777 };
  }
  return out;
}

/** Appends a signature block framed as `mcpb sign` frames one (the PKCS#7 bytes are not checked here). */
export function appendSignatureBlock(bundle: Buffer, pkcs7: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32LE(pkcs7.length, 0);
  return Buffer.concat([bundle, Buffer.from("MCPB_SIG_V1"), length, pkcs7, Buffer.from("MCPB_SIG_END")]);
}

/**
 * The bundle signed as `mcpb sign` signs one: a detached CMS SignedData over every byte of the
 * bundle, SHA-256, with signed attributes and the signer's certificate, made here by openssl
 * (the packer's own signer needs its CLI, which is not reachable offline), framed as the packer
 * frames it.
 */
export function signMcpb(
  bundle: Buffer,
  signer: SignerFiles,
  opts: { also?: SignerFiles; chain?: string; attached?: boolean } = {},
): Buffer {
  const dir = mkdtempSync(join(tmpdir(), "pc-mcpb-sign-"));
  // Hostile or unusual forms: a second signer, certificates carried beside the signer's, the content inside the block.
  const more = [
    ...(opts.also ? ["-signer", opts.also.certPath, "-inkey", opts.also.keyPath] : []),
    ...(opts.chain ? ["-certfile", opts.chain] : []),
    ...(opts.attached ? ["-nodetach"] : []),
  ];
  try {
    writeFileSync(join(dir, "bundle.zip"), bundle);
    // prettier-ignore
    execFileSync("openssl", ["cms", "-sign", "-binary", "-md", "sha256", "-in", join(dir, "bundle.zip"), "-signer", signer.certPath, "-inkey", signer.keyPath, ...more, "-outform", "DER", "-out", join(dir, "sig.der")], { stdio: ["ignore", "ignore", "pipe"] });
    return appendSignatureBlock(bundle, readFileSync(join(dir, "sig.der")));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The published MCP SDK 1.0.1 and every package it needs, as npm installs them (one flat node_modules). */
const SDK_CLOSURE: Array<[string, string]> = [
  ["@modelcontextprotocol/sdk", "1.0.1"],
  ["bytes", "3.1.2"],
  ["content-type", "1.0.5"],
  ["depd", "2.0.0"],
  ["http-errors", "2.0.1"],
  ["iconv-lite", "0.7.3"],
  ["inherits", "2.0.4"],
  ["raw-body", "3.0.2"],
  ["safer-buffer", "2.1.2"],
  ["setprototypeof", "1.2.0"],
  ["statuses", "2.0.2"],
  ["toidentifier", "1.0.1"],
  ["unpipe", "1.0.0"],
  ["zod", "3.25.76"],
];

/** The bundle's node_modules/ for a server on the published SDK, unpacked under `dir` from the vendored tarballs, as packer input. */
export function sdkNodeModules(dir: string): Record<string, PackedFile> {
  for (const [name, version] of SDK_CLOSURE) {
    const target = join(dir, "node_modules", name);
    mkdirSync(target, { recursive: true });
    const tarball = join(NPM_FIXTURES, "tarballs", tarballFile(name, version));
    execFileSync("tar", ["-xzf", tarball, "-C", target, "--strip-components=1"]);
  }
  return filesUnder(join(dir, "node_modules"), "node_modules/");
}
