// The HMAC chain: mac = HMAC-SHA256(key, prev_mac ‖ canonicalJson(row without mac)), hex.
import { canonicalJson, type JsonObject } from "./canonical-json";
import { hmacSha256Into, type HmacKey } from "../../workers/contracts/hmac-sha256";
import { hexOf } from "../../workers/contracts/hex";

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

/**
 * Computes a row's mac and its size: the UTF-8 length of the whole row (mac included) in
 * canonical JSON, which is what a segment's byte count sums; and the body, for the row's leaf
 * of the checkpoint's root. Synchronous: the row is MACed in the turn that writes it.
 */
export function sealRow(key: MacKey, fields: ChainedFields): { mac: string; bytes: number; body: string } {
  const body = canonicalRowBody(fields);
  // UTF-8 takes at most 3 bytes per UTF-16 code unit.
  const most = 3 * (fields.prev_mac.length + body.length);
  if (message.length < most) message = new Uint8Array(most);
  // Encoded apart, the two parts are the bytes of prev_mac ‖ body: the body opens with "{", so
  // no surrogate can pair across them. A tampered prev_mac need not be ASCII; this measures it.
  const prevBytes = encoder.encodeInto(fields.prev_mac, message).written;
  const bodyBytes = encoder.encodeInto(body, message.subarray(prevBytes)).written;
  hmacSha256Into(key, message, prevBytes + bodyBytes, digest);
  return { mac: hexOf(digest), bytes: bodyBytes + MAC_MEMBER_BYTES, body };
}
