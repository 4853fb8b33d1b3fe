// The HMAC chain: mac = HMAC-SHA256(key, prev_mac ‖ canonicalJson(row without mac)), hex.
import { canonicalJson, type JsonObject } from "./canonical-json";

/** A chain key prepared once for HMAC-SHA256 signing (WebCrypto, not extractable). */
export type MacKey = CryptoKey;

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
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

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
 * Computes a row's mac and its size: the UTF-8 length of the whole row (mac included) in
 * canonical JSON, which is what a segment's byte count sums.
 */
export async function sealRow(
  key: MacKey,
  fields: ChainedFields,
): Promise<{ mac: string; bytes: number; body: Uint8Array }> {
  const body = canonicalRowBody(fields);
  // One encoding of prev_mac ‖ body; the body's bytes are its tail. A stored prev_mac is 64
  // ASCII characters; a tampered one may not be, and is measured apart.
  const message = encoder.encode(fields.prev_mac + body);
  const prevBytes = /^[\x00-\x7f]*$/.test(fields.prev_mac)
    ? fields.prev_mac.length
    : encoder.encode(fields.prev_mac).length;
  const bodyBytes = message.subarray(prevBytes);
  const signature = new Uint8Array(await crypto.subtle.sign("HMAC", key, message));
  let mac = "";
  for (const byte of signature) mac += HEX[byte];
  return { mac, bytes: bodyBytes.length + MAC_MEMBER_BYTES, body: bodyBytes };
}
