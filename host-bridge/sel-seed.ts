// The security log's seed: the key of epoch 0, from which a verifier re-derives every epoch's
// key (durable/security-log/epoch-key.ts). It is made once, at the first start of a home, and
// never kept in the home in the clear: the log keeps only the current epoch's key, so a thief
// of the home cannot forge rows of the epochs before the theft. The owner gets it as a
// verification code shown once; with a passphrase (PERSONALCLAW_SEL_SEED_PASSPHRASE) it is
// also kept sealed to that passphrase in <home>/sel_seed.sealed (scrypt, AES-256-GCM), which
// `personalclaw security seed --show` opens. The passphrase is never written anywhere.
import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { writePrivateFile } from "./private-file";

/** scrypt cost: 2^15 × 8 × 1 (32 MiB, ~100 ms): slow enough to make guessing a passphrase dear. */
const SCRYPT = { N: 32768, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;

const SealedSeedSchema = z.object({
  version: z.literal(1),
  kdf: z.literal("scrypt"),
  N: z.number().int(),
  r: z.number().int(),
  p: z.number().int(),
  salt: z.string(),
  iv: z.string(),
  sealed: z.string(),
  tag: z.string(),
});

export function sealedSeedPath(home: string): string {
  return join(home, "sel_seed.sealed");
}

/** A fresh 256-bit seed, as 64 hex characters. */
export function freshSeed(): string {
  return randomBytes(32).toString("hex");
}

function keyFrom(passphrase: string, salt: Buffer, cost: { N: number; r: number; p: number }): Buffer {
  return scryptSync(passphrase.normalize("NFC"), salt, 32, { ...cost, maxmem: SCRYPT.maxmem });
}

/** Writes the seed sealed to the passphrase (0600). */
export function sealSeed(home: string, seedHex: string, passphrase: string): void {
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", keyFrom(passphrase, salt, SCRYPT), iv);
  cipher.setAAD(Buffer.from("personalclaw sel seed v1"));
  const sealed = Buffer.concat([cipher.update(Buffer.from(seedHex, "hex")), cipher.final()]);
  const record = {
    version: 1,
    kdf: "scrypt",
    N: SCRYPT.N,
    r: SCRYPT.r,
    p: SCRYPT.p,
    salt: salt.toString("base64"),
    iv: iv.toString("base64"),
    sealed: sealed.toString("base64"),
    tag: cipher.getAuthTag().toString("base64"),
  };
  writePrivateFile(sealedSeedPath(home), `${JSON.stringify(record)}\n`);
}

export type UnsealResult =
  { ok: true; seedHex: string } | { ok: false; reason: "not_kept" | "unreadable" | "wrong_passphrase" };

/** Opens the sealed seed with the passphrase. */
export function unsealSeed(home: string, passphrase: string): UnsealResult {
  let text: string;
  try {
    text = readFileSync(sealedSeedPath(home), "utf8");
  } catch (error) {
    return { ok: false, reason: (error as NodeJS.ErrnoException).code === "ENOENT" ? "not_kept" : "unreadable" };
  }
  let record: z.infer<typeof SealedSeedSchema>;
  try {
    const parsed = SealedSeedSchema.safeParse(JSON.parse(text));
    if (!parsed.success) return { ok: false, reason: "unreadable" };
    record = parsed.data;
  } catch {
    return { ok: false, reason: "unreadable" };
  }
  try {
    const decipher = createDecipheriv(
      "aes-256-gcm",
      keyFrom(passphrase, Buffer.from(record.salt, "base64"), record),
      Buffer.from(record.iv, "base64"),
    );
    decipher.setAAD(Buffer.from("personalclaw sel seed v1"));
    decipher.setAuthTag(Buffer.from(record.tag, "base64"));
    const seed = Buffer.concat([decipher.update(Buffer.from(record.sealed, "base64")), decipher.final()]);
    return { ok: true, seedHex: seed.toString("hex") };
  } catch {
    return { ok: false, reason: "wrong_passphrase" };
  }
}
