// The HMAC chain: mac = hex(HMAC-SHA256(key, canonicalJson(row without mac))). The row holds
// prev_mac, so each mac covers the one before it. Logs written before this form MACed
// prev_mac ‖ canonicalJson(row without mac); their rows still verify (macMatches).
import { canonicalJson, type JsonObject } from "../crypto/canonical-json";
import { hmacSha256Into, type HmacKey } from "../crypto/hmac-sha256";
import { hexDigitsInto } from "../crypto/hex";

/** A chain key prepared once for HMAC-SHA256 (its pad blocks compressed). */
export type MacKey = HmacKey;

/** prev_mac of the very first row of a log. */
export const GENESIS_PREV_MAC = "0".repeat(64);

/** Every field of a row that the MAC covers (all of them except mac itself). */
export interface ChainedFields {
  seq: number;
  ts: string;
  kind: string;
  principal: string;
  outcome: string;
  subject: string;
  detail: JsonObject;
  segment: number;
  prev_mac: string;
}

export interface StoredRow extends ChainedFields {
  mac: string;
}

const KEY_HEX = /^[0-9a-fA-F]{64}$/;
const encoder = new TextEncoder();

/** True when the SEL key is the 64 hex characters (256 bits) the log requires. */
export function isChainKeyHex(keyHex: unknown): keyHex is string {
  return typeof keyHex === "string" && KEY_HEX.test(keyHex);
}

/** The canonical serialisation of a row without its mac (what the MAC covers after prev_mac). */
export function canonicalRowBody(fields: ChainedFields): string {
  return canonicalJson({
    seq: fields.seq,
    ts: fields.ts,
    kind: fields.kind,
    principal: fields.principal,
    outcome: fields.outcome,
    subject: fields.subject,
    detail: fields.detail,
    segment: fields.segment,
    prev_mac: fields.prev_mac,
  });
}

// `,"mac":"<64 hex>"` — the bytes the mac member adds to the canonical row.
const MAC_MEMBER_BYTES = 8 + 64 + 1;

/**
 * The one buffer every row's mac input is encoded into, and its mac. Reusing them is safe even
 * with a verify walking beside the appends: a row is encoded and MACed in one synchronous call,
 * and nothing else reads either.
 */
let message = new Uint8Array(4096);
const digest = new Uint8Array(32);
const decoder = new TextDecoder();

/** A row's mac and what its append records of it. */
export interface SealedRow {
  mac: string;
  /** The UTF-8 length of the whole row (mac included) in canonical JSON: what a segment's byte count sums. */
  bytes: number;
  /**
   * The mac's digits and the canonical body, as UTF-8, for the row's leaf of the checkpoint's
   * root: views of shared buffers, read before the next sealRow (the append that sealed the row
   * adds its leaf in the same synchronous turn).
   */
  macUtf8: Uint8Array;
  bodyUtf8: Uint8Array;
}

/** The digits of the last mac sealRow computed. */
const macDigits = new Uint8Array(64);

/** Computes a row's mac. Synchronous: the row is MACed in the turn that writes it. */
export function sealRow(key: MacKey, fields: ChainedFields): SealedRow {
  const body = canonicalRowBody(fields);
  // UTF-8 takes at most 3 bytes per UTF-16 code unit.
  if (message.length < 3 * body.length) message = new Uint8Array(3 * body.length);
  const bodyBytes = encoder.encodeInto(body, message).written;
  hmacSha256Into(key, message, bodyBytes, digest);
  hexDigitsInto(digest, macDigits);
  return {
    mac: decoder.decode(macDigits),
    bytes: bodyBytes + MAC_MEMBER_BYTES,
    macUtf8: macDigits,
    bodyUtf8: message.subarray(0, bodyBytes),
  };
}

/** The mac a log written before the current form gave the row: over prev_mac ‖ canonical body. */
function earlierFormMac(key: MacKey, fields: ChainedFields): string {
  const text = fields.prev_mac + canonicalRowBody(fields);
  if (message.length < 3 * text.length) message = new Uint8Array(3 * text.length);
  hmacSha256Into(key, message, encoder.encodeInto(text, message).written, digest);
  hexDigitsInto(digest, macDigits);
  return decoder.decode(macDigits);
}

const MAC_HEX = /^[0-9a-f]{64}$/;

/**
 * True when `row.mac` is the row's mac under `key`, in the current form or the earlier one. The
 * earlier form is taken only for a prev_mac of 64 hex digits, so no message of one form is a
 * message of the other (a canonical body opens with "{", an earlier message with a digit):
 * accepting both lets no one who lacks the key pass a mac the log made off as another row's.
 */
export function macMatches(key: MacKey, row: StoredRow): boolean {
  if (sealRow(key, row).mac === row.mac) return true;
  return MAC_HEX.test(row.prev_mac) && earlierFormMac(key, row) === row.mac;
}
