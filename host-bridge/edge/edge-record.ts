// This machine's side of a pairing with an edge worker: the edge's public origin, the machine's id
// and its Ed25519 private key, in <home>/edge.json (0600, written whole). The key never leaves the
// machine: the edge holds only its public half, and a connect proves it by signing a fresh challenge.
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from "node:crypto";
import { z } from "zod";
import { linkProofMessage, MachineIdSchema } from "../../kernel/contracts/bridge-link";
import { writePrivateFile } from "../private-file";
import { readPrivateRecordFile, type PrivateRecord } from "../private-record";

export const EdgeRecordSchema = z.strictObject({
  origin: z.string().startsWith("https://"),
  machine: MachineIdSchema,
  paired_at: z.string(),
  /** PKCS#8 PEM of the machine's Ed25519 private key. */
  private_key: z.string().startsWith("-----BEGIN PRIVATE KEY-----"),
});
export type EdgeRecord = z.infer<typeof EdgeRecordSchema>;

/** A fresh Ed25519 key for this machine: the private half as PEM, the public half as the 32 raw bytes in hex. */
export function newMachineKey(): { privateKeyPem: string; publicKeyHex: string } {
  const { privateKey } = generateKeyPairSync("ed25519");
  return {
    privateKeyPem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    publicKeyHex: publicHex(privateKey),
  };
}

/** The raw public key of an Ed25519 private key, in hex (the last 32 bytes of its SPKI encoding). */
export function publicHex(privateKey: KeyObject): string {
  const spki = createPublicKey(privateKey).export({ type: "spki", format: "der" });
  return spki.subarray(spki.length - 32).toString("hex");
}

/** The machine's hello signature over one socket's challenge. */
export function signChallenge(record: EdgeRecord, nonce: string): string {
  const key = createPrivateKey(record.private_key);
  return sign(null, linkProofMessage(record.origin, record.machine, nonce), key).toString("hex");
}

export function readEdgeRecord(path: string): PrivateRecord<EdgeRecord> {
  return readPrivateRecordFile(path, EdgeRecordSchema);
}

export function writeEdgeRecord(path: string, record: EdgeRecord): void {
  writePrivateFile(path, `${JSON.stringify(record, null, 2)}\n`);
}
