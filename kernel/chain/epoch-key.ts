// The forward-secure chain key. The MAC key of epoch e+1 is HMAC-SHA256(key of epoch e,
// EPOCH_STEP_LABEL): a one-way step, so whoever takes the key of epoch e can compute every
// later key but no earlier one. The key of epoch 0 is one step from the seed, so the seed
// itself is never a MAC key and never reaches the log: the host bridge derives epoch 0's key,
// hands only that to the log, and shows the seed to the owner. The log keeps only the current
// epoch's key and overwrites the previous one when it steps; the verifier re-derives every
// epoch's key from the seed.
import { isChainKeyHex, type MacKey } from "./chain-mac";
import { hmacSha256, prepareHmacKey } from "../crypto/hmac-sha256";
import { hexOf } from "../crypto/hex";

/** The label of the one-way step; changing one byte would make every stepped row unverifiable. */
export const EPOCH_STEP_LABEL = "personalclaw security log epoch step v1";

/** An epoch lasts at most this long in the product (the log steps at its next row after it); rotation also steps. */
export const EPOCH_MS = 60 * 60 * 1000;

/** Kind of the row that opens an epoch begun by the clock (a rotation's `sel.rotated` row opens its own). */
export const EPOCH_KIND = "sel.epoch";

const encoder = new TextEncoder();

export function hexToBytes(hex: string): Uint8Array {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

/** Prepares raw key bytes for HMAC-SHA256 (the prepared key holds no copy of the bytes). */
export function importMacKey(bytes: Uint8Array): MacKey {
  return prepareHmacKey(bytes);
}

/** The key of the next epoch: HMAC-SHA256(key, EPOCH_STEP_LABEL). The caller erases the old bytes. */
export function stepEpochKey(key: Uint8Array): Uint8Array {
  return hmacSha256(prepareHmacKey(key), encoder.encode(EPOCH_STEP_LABEL));
}

/** Which key signs a row of a given epoch; null when the holder cannot know it (an erased epoch). */
export interface ChainKeys {
  keyFor(epoch: number): Promise<MacKey | null>;
}

/** The key of epoch 0: one step from the seed. */
export async function firstEpochKey(seedHex: string): Promise<string> {
  if (!isChainKeyHex(seedHex)) throw new Error("the seed must be 64 hexadecimal characters");
  return hexOf(stepEpochKey(hexToBytes(seedHex.toLowerCase())));
}

/** Every epoch's key, derived forward from the seed (the verifier's keyring). */
export async function keysFromSeed(seedHex: string): Promise<ChainKeys> {
  return keysFromFirstEpochKey(await firstEpochKey(seedHex));
}

/**
 * Every epoch's key, derived forward from the key of epoch 0: for a log started before epochs,
 * whose `sel_hmac.key` is that key.
 */
export function keysFromFirstEpochKey(keyHex: string): ChainKeys {
  if (!isChainKeyHex(keyHex)) throw new Error("the key must be 64 hexadecimal characters");
  let epoch = 0;
  let bytes = hexToBytes(keyHex.toLowerCase());
  const imported = new Map<number, MacKey>();
  return {
    async keyFor(wanted: number): Promise<MacKey | null> {
      const known = imported.get(wanted);
      if (known) return known;
      if (wanted < epoch) return null; // never asked in seq order; the walk only moves forward
      while (epoch < wanted) {
        const next = stepEpochKey(bytes);
        bytes.fill(0);
        bytes = next;
        epoch++;
      }
      const key = importMacKey(bytes);
      imported.clear();
      imported.set(epoch, key);
      return key;
    },
  };
}

/** The one key a running log holds: its current epoch's; earlier epochs are erased. */
export function keysHeld(epoch: number, key: MacKey): ChainKeys {
  return { keyFor: async (wanted) => (wanted === epoch ? key : null) };
}

/** A single key for every epoch: a log kept without epochs. */
export function singleKey(key: MacKey): ChainKeys {
  return { keyFor: async () => key };
}

/**
 * The epoch a row opens, or null: an `sel.epoch` row, or a `sel.rotated` row, whose detail
 * names `epoch`. The verifier steps exactly there, and only by one.
 */
export function epochOpenedBy(row: { kind: string; detail: Record<string, unknown> }): number | null {
  if (row.kind !== EPOCH_KIND && row.kind !== "sel.rotated") return null;
  const epoch = row.detail.epoch;
  return typeof epoch === "number" && Number.isInteger(epoch) && epoch >= 0 ? epoch : null;
}

/** Groups a 64-hex seed as the verification code the owner writes down: 16 groups of 4. */
export function verificationCode(seedHex: string): string {
  return seedHex.toLowerCase().match(/.{4}/g)!.join("-");
}

/** Reads a verification code (dashes and spaces ignored) back into the 64-hex seed; null if malformed. */
export function seedFromVerificationCode(code: string): string | null {
  const hex = code.replace(/[\s-]/g, "").toLowerCase();
  return isChainKeyHex(hex) ? hex : null;
}
