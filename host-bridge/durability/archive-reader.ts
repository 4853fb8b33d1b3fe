// Reads a backup archive (archive-format.ts) in the order that keeps a hostile or damaged file
// from reaching anything: the container's bounds, the manifest's signature under the log's
// checkpoint key, every part's SHA-256, then the passphrase — all before a byte is opened, so
// a tampered archive is `archive_invalid` and a wrong passphrase `archive_passphrase_wrong`
// before anything is written. Opening a part checks each chunk's tag as well.
import { createHash } from "node:crypto";
import { constants } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { isAbsolute, normalize } from "node:path";
import { GatewayError } from "../../kernel/contracts/errors";
import { openCheckpoint } from "../../kernel/chain/checkpoint";
import {
  ARCHIVE_MAGIC,
  CHUNK_BYTES,
  ENVELOPE_LIMIT,
  EnvelopeSchema,
  HEADER_BYTES,
  SEALED_PREFIX_BYTES,
  SEALED_TAG_BYTES,
  TRAILER_BYTES,
  TRAILER_MAGIC,
  deriveKey,
  keyMatches,
  openChunk,
  sealedSize,
  type Envelope,
  type PartEntry,
} from "./archive-format";
import { manifestSignatureHolds } from "./archive-signature";

export function invalid(reason: string): GatewayError {
  return new GatewayError("archive_invalid", { vars: { reason } });
}

/** A part's path is a plain relative path inside the home: no `..`, no absolute name, no empty segment. */
export function isSafeRelativePath(path: string): boolean {
  return (
    !isAbsolute(path) &&
    normalize(path) === path &&
    !path.split("/").some((segment) => segment === ".." || segment === "." || segment === "") &&
    !path.includes("\0")
  );
}

export class OpenedArchive {
  private constructor(
    readonly path: string,
    private readonly fh: FileHandle,
    readonly envelope: Envelope,
  ) {}

  /** Reads and checks the container and the signed manifest; `archive_invalid` when anything is off. */
  static async open(path: string): Promise<OpenedArchive> {
    let fh: FileHandle;
    try {
      fh = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch (error) {
      throw invalid(`it cannot be read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
    }
    try {
      const envelope = await readEnvelope(fh);
      return new OpenedArchive(path, fh, envelope);
    } catch (error) {
      await fh.close();
      throw error;
    }
  }

  get manifest() {
    return this.envelope.manifest;
  }

  async close(): Promise<void> {
    await this.fh.close();
  }

  /** Every part's sealed bytes hash to what the signed manifest says. */
  async verifyParts(progress?: (done: number, total: number) => void): Promise<void> {
    const parts = this.manifest.parts;
    for (const [i, part] of parts.entries()) {
      const hash = createHash("sha256");
      const buf = Buffer.allocUnsafe(CHUNK_BYTES);
      for (let at = 0; at < part.size;) {
        const { bytesRead } = await this.fh.read(buf, 0, Math.min(buf.length, part.size - at), part.offset + at);
        if (bytesRead === 0) throw invalid(`${part.path} is cut short`);
        hash.update(buf.subarray(0, bytesRead));
        at += bytesRead;
      }
      if (hash.digest("hex") !== part.sha256) throw invalid(`${part.path} does not match its SHA-256`);
      progress?.(i + 1, parts.length);
    }
  }

  /** The key from the passphrase; `archive_passphrase_wrong` when it is not the archive's. */
  unlock(passphrase: string): Buffer {
    const { kdf, key_check } = this.manifest;
    const key = deriveKey(passphrase, Buffer.from(kdf.salt, "base64"), kdf);
    if (!keyMatches(key, key_check)) throw new GatewayError("archive_passphrase_wrong");
    return key;
  }

  /** A part's plaintext, chunk by chunk; a chunk that does not authenticate is `archive_invalid`. */
  async *openPart(key: Buffer, part: PartEntry): AsyncGenerator<Buffer> {
    const prefix = Buffer.alloc(SEALED_PREFIX_BYTES);
    await this.fh.read(prefix, 0, prefix.length, part.offset);
    const count = Math.max(1, Math.ceil(part.plain_size / CHUNK_BYTES));
    let at = part.offset + SEALED_PREFIX_BYTES;
    for (let index = 0; index < count; index++) {
      const plain = index === count - 1 ? part.plain_size - index * CHUNK_BYTES : CHUNK_BYTES;
      const sealed = Buffer.allocUnsafe(plain + SEALED_TAG_BYTES);
      const { bytesRead } = await this.fh.read(sealed, 0, sealed.length, at);
      if (bytesRead !== sealed.length) throw invalid(`${part.path} is cut short`);
      const opened = openChunk(key, prefix, part.path, index, index === count - 1, sealed);
      if (opened === null) throw invalid(`${part.path} does not open under this archive's key`);
      at += sealed.length;
      yield opened;
    }
  }

  /** A whole part in memory (a store's export, a small file). */
  async readPart(key: Buffer, part: PartEntry): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of this.openPart(key, part)) chunks.push(chunk);
    return Buffer.concat(chunks);
  }
}

async function readEnvelope(fh: FileHandle): Promise<Envelope> {
  const size = (await fh.stat()).size;
  if (size < HEADER_BYTES + TRAILER_BYTES) throw invalid("it is too short to be an archive");
  const header = Buffer.alloc(HEADER_BYTES);
  await fh.read(header, 0, HEADER_BYTES, 0);
  if (!header.equals(ARCHIVE_MAGIC)) throw invalid("it is not a PersonalClaw backup (version 1)");
  const trailer = Buffer.alloc(TRAILER_BYTES);
  await fh.read(trailer, 0, TRAILER_BYTES, size - TRAILER_BYTES);
  if (!trailer.subarray(12).equals(TRAILER_MAGIC)) throw invalid("its trailer is damaged");
  const at = Number(trailer.readBigUInt64BE(0));
  const length = trailer.readUInt32BE(8);
  if (length > ENVELOPE_LIMIT || at < HEADER_BYTES || at + length !== size - TRAILER_BYTES)
    throw invalid("its trailer does not point at its manifest");
  const text = Buffer.alloc(length);
  await fh.read(text, 0, length, at);
  let parsed;
  try {
    parsed = EnvelopeSchema.safeParse(JSON.parse(text.toString("utf8")));
  } catch {
    throw invalid("its manifest is not JSON");
  }
  if (!parsed.success) throw invalid(`its manifest is not readable (${parsed.error.issues[0]?.path.join(".")})`);
  const envelope = parsed.data;
  if (!manifestSignatureHolds(envelope)) throw invalid("its manifest's signature does not verify");
  const checkpoint = await openCheckpoint(
    envelope.manifest.log.checkpoint.note,
    envelope.manifest.log.checkpoint.public_key,
  );
  if (!checkpoint.ok) throw invalid(`its log checkpoint does not verify: ${checkpoint.reason}`);
  checkLayout(envelope, at);
  return envelope;
}

/** Parts lie back to back from the header to the manifest, each the size its plaintext seals to, each path safe and once. */
function checkLayout(envelope: Envelope, manifestAt: number): void {
  let expected = HEADER_BYTES;
  const seen = new Set<string>();
  for (const part of envelope.manifest.parts) {
    if (part.offset !== expected || part.size !== sealedSize(part.plain_size))
      throw invalid(`${part.path} does not lie where the manifest says`);
    if (!isSafeRelativePath(part.path) || seen.has(part.path))
      throw invalid(`the path ${JSON.stringify(part.path)} is not allowed`);
    seen.add(part.path);
    expected += part.size;
  }
  if (expected !== manifestAt) throw invalid("its parts do not fill the archive");
  for (const folder of envelope.manifest.folders)
    if (!isSafeRelativePath(folder.path)) throw invalid(`the folder ${JSON.stringify(folder.path)} is not allowed`);
}
