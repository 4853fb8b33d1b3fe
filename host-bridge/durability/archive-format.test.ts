import { describe, expect, it } from "vitest";
import { CHUNK_BYTES, newArchiveKey, openChunk, sealPart, sealedSize, keyMatches, keyCheck } from "./archive-format";
import { isSafeRelativePath } from "./archive-reader";

async function* chunksOf(bytes: Buffer): AsyncGenerator<Buffer> {
  for (let at = 0; at < bytes.length; at += CHUNK_BYTES) yield bytes.subarray(at, at + CHUNK_BYTES);
}

async function seal(key: Buffer, path: string, bytes: Buffer): Promise<Buffer> {
  const out: Buffer[] = [];
  for await (const piece of sealPart(key, path, bytes.length, chunksOf(bytes))) out.push(piece);
  return Buffer.concat(out);
}

/** Opens a sealed part the way the reader does, chunk by chunk; null when any chunk does not authenticate. */
function open(key: Buffer, path: string, sealed: Buffer, plainSize: number): Buffer | null {
  const prefix = sealed.subarray(0, 8);
  const count = Math.max(1, Math.ceil(plainSize / CHUNK_BYTES));
  const out: Buffer[] = [];
  let at = 8;
  for (let i = 0; i < count; i++) {
    const plain = i === count - 1 ? plainSize - i * CHUNK_BYTES : CHUNK_BYTES;
    const chunk = openChunk(key, prefix, path, i, i === count - 1, sealed.subarray(at, at + plain + 16));
    if (chunk === null) return null;
    out.push(chunk);
    at += plain + 16;
  }
  return Buffer.concat(out);
}

describe("a sealed archive part", () => {
  const { key } = newArchiveKey("a passphrase of the unit suite");
  const bytes = Buffer.alloc(CHUNK_BYTES * 2 + 17, 7);

  it("opens to its bytes, across chunks and empty, and seals to the size the manifest checks", async () => {
    for (const plain of [bytes, Buffer.alloc(0), Buffer.from("x")]) {
      const sealed = await seal(key, "apps/a/data/app.db", plain);
      expect(sealed.length).toBe(sealedSize(plain.length));
      expect(open(key, "apps/a/data/app.db", sealed, plain.length)?.equals(plain)).toBe(true);
    }
  });

  it("does not open under another name, another key, cut short at a chunk boundary, or with a byte flipped", async () => {
    const sealed = await seal(key, "apps/a/data/app.db", bytes);
    expect(open(key, "apps/b/data/app.db", sealed, bytes.length)).toBeNull();
    expect(open(newArchiveKey("another passphrase").key, "apps/a/data/app.db", sealed, bytes.length)).toBeNull();
    // The first two chunks alone, presented as the whole part: the second is not marked last.
    expect(open(key, "apps/a/data/app.db", sealed.subarray(0, 8 + 2 * (CHUNK_BYTES + 16)), 2 * CHUNK_BYTES)).toBeNull();
    const flipped = Buffer.from(sealed);
    flipped[100] = flipped[100]! ^ 1;
    expect(open(key, "apps/a/data/app.db", flipped, bytes.length)).toBeNull();
  });

  it("refuses a source that changed size while it was sealed", async () => {
    const pieces = sealPart(key, "config.json", 10, chunksOf(Buffer.alloc(20)));
    await expect(async () => {
      for await (const piece of pieces) void piece;
    }).rejects.toThrow(/size|grew/);
  });

  it("tells the archive's key from another by its key check", () => {
    const other = newArchiveKey("another passphrase").key;
    expect(keyMatches(key, keyCheck(key))).toBe(true);
    expect(keyMatches(other, keyCheck(key))).toBe(false);
  });
});

describe("a part's path", () => {
  it("is a plain relative path inside the home", () => {
    for (const good of ["config.json", "apps/a/data/app.db", "secrets/store/X.json"])
      expect(isSafeRelativePath(good)).toBe(true);
    for (const bad of ["/etc/passwd", "../x", "apps/../../x", "apps//x", "apps/./x", "apps/x/", "a\0b", ""])
      expect(isSafeRelativePath(bad), bad).toBe(false);
  });
});
