// The backup archive's container (docs/backup-and-restore.md, "The archive"). One file:
//
//   "PCLAWBAK" 0x01 + 7 zero bytes          16-byte header
//   part, part, ...                          each part's sealed bytes, back to back
//   envelope                                 UTF-8 JSON {manifest, signature}, in the clear
//   offset (u64 BE) length (u32 BE) "PCBK"   16-byte trailer: where the envelope lies
//
// A part is one file of the home (or one Durable Object's export) sealed to the owner's
// passphrase: scrypt makes the key, each 1 MiB chunk is AES-256-GCM with a nonce of the part's
// 8 random bytes and the chunk's index, and the associated data names the part, the chunk and
// whether it is the last, so a part cut short, reordered or moved under another name does not
// open. The manifest lists every part with its offset, size and SHA-256 of the sealed bytes,
// and is signed with the security log's checkpoint key: a byte changed anywhere is found
// before anything is opened. A tar would have wrapped the same opaque sealed parts and added a
// second parser of hostile input; this container is read with every bound checked.
import { createCipheriv, createDecipheriv, createHmac, randomBytes, scryptSync, timingSafeEqual } from "node:crypto";
import { z } from "zod";

export const ARCHIVE_MAGIC = Buffer.from("PCLAWBAK\x01\0\0\0\0\0\0\0", "latin1");
export const TRAILER_MAGIC = Buffer.from("PCBK", "latin1");
export const HEADER_BYTES = 16;
export const TRAILER_BYTES = 16;
export const CHUNK_BYTES = 1024 * 1024;
const TAG_BYTES = 16;
const PREFIX_BYTES = 8;
/** The envelope is small (a line per file); a larger one is not an archive this gateway wrote. */
export const ENVELOPE_LIMIT = 64 * 1024 * 1024;

/** scrypt cost: 2^15 × 8 × 1 (32 MiB, ~100 ms), as the sealed log seed uses. */
const SCRYPT = { N: 32768, r: 8, p: 1 } as const;
const KEY_CHECK_LABEL = "personalclaw backup key check v1";

export const PartKindSchema = z.enum(["store", "home-file", "app-file", "app-data"]);
export type PartKind = z.infer<typeof PartKindSchema>;

export const PartEntrySchema = z.strictObject({
  /** Where it goes, relative to the home (a store: `state/<class>.json`). */
  path: z.string().min(1).max(4096),
  kind: PartKindSchema,
  /** The app it belongs to, for app-file and app-data parts. */
  app: z.string().optional(),
  mode: z.number().int().min(0).max(0o777),
  offset: z.number().int().min(HEADER_BYTES),
  size: z.number().int().min(0),
  plain_size: z.number().int().min(0),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
export type PartEntry = z.infer<typeof PartEntrySchema>;

export const StoreFileSchema = z.strictObject({
  className: z.string(),
  file: z.string().regex(/^[0-9a-f]{1,128}\.sqlite$/),
});

export const ManifestSchema = z.strictObject({
  format: z.literal("personalclaw-backup"),
  version: z.literal(1),
  created_at: z.string(),
  gateway_version: z.string(),
  kdf: z.strictObject({
    alg: z.literal("scrypt"),
    N: z.number().int(),
    r: z.number().int(),
    p: z.number().int(),
    salt: z.string(),
  }),
  /** HMAC of a fixed label under the key: tells a wrong passphrase from a damaged part. */
  key_check: z.string().regex(/^[0-9a-f]{64}$/),
  log: z.strictObject({
    head: z.strictObject({ seq: z.number().int().min(0), mac: z.string().regex(/^[0-9a-f]{64}$/) }),
    checkpoint: z.strictObject({
      note: z.string(),
      public_key: z.string(),
      origin: z.string(),
      seq: z.number().int(),
      row_seq: z.number().int(),
    }),
  }),
  /** Each Durable Object's storage file name under state/<uniqueKey>/ (the same in every home). */
  store_files: z.array(StoreFileSchema),
  apps: z.array(z.strictObject({ name: z.string(), digest: z.string().nullable(), packages: z.array(z.string()) })),
  parts: z.array(PartEntrySchema),
  /** Folders to make even when empty, relative to the home, with their mode (an app's folder must stay readable by its child). */
  folders: z.array(z.strictObject({ path: z.string().min(1).max(4096), mode: z.number().int().min(0).max(0o777) })),
  /** What was left out and why (a link under data/, a socket...). */
  skipped: z.array(z.string()),
});
export type Manifest = z.infer<typeof ManifestSchema>;

export const EnvelopeSchema = z.strictObject({
  manifest: ManifestSchema,
  /** Ed25519 over the canonical JSON of `manifest`, by the key of `manifest.log.checkpoint.public_key`. */
  signature: z.string(),
});
export type Envelope = z.infer<typeof EnvelopeSchema>;

export interface ArchiveKey {
  key: Buffer;
  kdf: Manifest["kdf"];
}

/** A fresh key for a new archive from the owner's passphrase. */
export function newArchiveKey(passphrase: string): ArchiveKey {
  const salt = randomBytes(16);
  return { key: deriveKey(passphrase, salt, SCRYPT), kdf: { alg: "scrypt", ...SCRYPT, salt: salt.toString("base64") } };
}

export function deriveKey(passphrase: string, salt: Buffer, cost: { N: number; r: number; p: number }): Buffer {
  if (cost.N > 1 << 20 || cost.r > 32 || cost.p > 16)
    throw new Error("the archive asks for an scrypt cost past any this gateway writes");
  return scryptSync(passphrase.normalize("NFC"), salt, 32, { ...cost, maxmem: 256 * 1024 * 1024 });
}

export function keyCheck(key: Buffer): string {
  return createHmac("sha256", key).update(KEY_CHECK_LABEL).digest("hex");
}

export function keyMatches(key: Buffer, check: string): boolean {
  const mine = Buffer.from(keyCheck(key), "hex");
  const theirs = Buffer.from(check, "hex");
  return mine.length === theirs.length && timingSafeEqual(mine, theirs);
}

function chunkNonce(prefix: Buffer, index: number): Buffer {
  const nonce = Buffer.alloc(12);
  prefix.copy(nonce, 0, 0, PREFIX_BYTES);
  nonce.writeUInt32BE(index, PREFIX_BYTES);
  return nonce;
}

function chunkAad(path: string, index: number, last: boolean): Buffer {
  return Buffer.from(`personalclaw backup v1\0${path}\0${index}\0${last ? 1 : 0}`, "utf8");
}

/** The sealed size of a part of `plainSize` bytes. */
export function sealedSize(plainSize: number): number {
  const chunks = Math.max(1, Math.ceil(plainSize / CHUNK_BYTES));
  return PREFIX_BYTES + plainSize + chunks * TAG_BYTES;
}

/** Seals one part's plaintext, chunk by chunk; `chunks` yields the plaintext in CHUNK_BYTES pieces (the last shorter). */
export async function* sealPart(
  key: Buffer,
  path: string,
  plainSize: number,
  chunks: AsyncIterable<Buffer>,
): AsyncGenerator<Buffer> {
  const prefix = randomBytes(PREFIX_BYTES);
  yield prefix;
  const count = Math.max(1, Math.ceil(plainSize / CHUNK_BYTES));
  let index = 0;
  let total = 0;
  for await (const chunk of chunks) {
    total += chunk.length;
    // Every chunk but the last is whole, and the whole is the size the manifest will name.
    if (index >= count || total > plainSize || (index < count - 1 && chunk.length !== CHUNK_BYTES))
      throw new Error(`${path} changed size while it was sealed`);
    const cipher = createCipheriv("aes-256-gcm", key, chunkNonce(prefix, index));
    cipher.setAAD(chunkAad(path, index, index === count - 1));
    yield Buffer.concat([cipher.update(chunk), cipher.final(), cipher.getAuthTag()]);
    index++;
  }
  if (index === 0 && count === 1) {
    const cipher = createCipheriv("aes-256-gcm", key, chunkNonce(prefix, 0));
    cipher.setAAD(chunkAad(path, 0, true));
    yield Buffer.concat([cipher.final(), cipher.getAuthTag()]);
    index = 1;
  }
  if (index !== count || total !== plainSize) throw new Error(`${path} changed size while it was sealed`);
}

/** Opens one sealed chunk; null when it does not authenticate (altered, moved, or another key). */
export function openChunk(
  key: Buffer,
  prefix: Buffer,
  path: string,
  index: number,
  last: boolean,
  sealed: Buffer,
): Buffer | null {
  if (sealed.length < TAG_BYTES) return null;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, chunkNonce(prefix, index));
    decipher.setAAD(chunkAad(path, index, last));
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)), decipher.final()]);
  } catch {
    return null;
  }
}

export const SEALED_PREFIX_BYTES = PREFIX_BYTES;
export const SEALED_TAG_BYTES = TAG_BYTES;
