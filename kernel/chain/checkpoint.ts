// Signed checkpoints of the security log in the C2SP signed-note format, their keyless root,
// and witness cosignatures (C2SP tlog-cosignature/v1). Pure: WebCrypto only, so the Durable
// Object signs with it and the CLI verifies with it, offline, holding only the public key.
//
// The root is a hash chain, not a Merkle tree: root_k = SHA-256(ROOT_LABEL ‖ root_{k-1} ‖
// leaf…) over the rows since the previous boundary, a leaf being `<mac> <canonical row>\n`.
// A boundary is the row before every `sel.checkpoint` and `sel.rotated` row. Anyone holding
// the rows can recompute it without any key; equal roots mean equal rows (SHA-256 collision
// resistance), which is what a checkpoint kept elsewhere needs to prove.
import { hexOf } from "../crypto/hex";

const encoder = new TextEncoder();

export const CHECKPOINT_KIND = "sel.checkpoint";
export const COSIGNED_KIND = "sel.cosigned";
const ROOT_LABEL = encoder.encode("personalclaw security log root v1\n");
const ROOT_BYTES = 32;
/** Where a RootLeaves buffer's leaves start: after the label and the previous root. */
const LEAVES_AT = ROOT_LABEL.length + ROOT_BYTES;
/** The root before seq 1. */
export const GENESIS_ROOT = new Uint8Array(ROOT_BYTES);
const ED25519_NOTE_TYPE = 0x01;
const COSIGNATURE_TYPE = 0x04;
const EM_DASH = "\u2014";
const SPACE = 0x20;
const NEWLINE = 0x0a;

export function toBase64(bytes: Uint8Array): string {
  let text = "";
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text);
}

export function fromBase64(text: string): Uint8Array | null {
  try {
    const raw = atob(text);
    const bytes = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    return bytes;
  } catch {
    return null;
  }
}

/** WebCrypto's typings want an ArrayBuffer-backed view; every array here is one. */
export function bufferOf(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  return bytes as Uint8Array<ArrayBuffer>;
}

function concat(parts: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  const total = parts.reduce((sum, part) => sum + part.length, 0);
  const out = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** One row as the root hashes it: its leaf is `<mac> <canonical JSON of the row without mac>\n`. */
export interface Leaf {
  mac: string;
  /** The canonical body (what sealRow MACed after prev_mac). */
  body: string;
}

export function leafOf(mac: string, canonicalBody: string): Leaf {
  return { mac, body: canonicalBody };
}

/**
 * The leaves since the previous boundary, kept as the bytes the root hashes: each row's leaf is
 * encoded once, as its row is written, so a row's text does not outlive its append and a
 * checkpoint digests one buffer. Encoding the leaves one by one gives the bytes of their whole
 * text (UTF-8 of a concatenation is the concatenation of the parts' UTF-8: a leaf ends with a
 * newline, which no lone surrogate can pair with). The buffer opens with room for the label and
 * the previous root, so a checkpoint digests it where it is.
 */
export class RootLeaves {
  private buffer = new Uint8Array(64 * 1024);
  private used = LEAVES_AT;
  /** Leaves added since the last boundary. */
  count = 0;

  /** Adds a row's leaf from its mac's digits and its canonical body, both UTF-8. */
  add(macUtf8: Uint8Array, bodyUtf8: Uint8Array): void {
    // The mac's digits, the space, the body and the newline.
    const size = macUtf8.length + 1 + bodyUtf8.length + 1;
    if (this.used + size > this.buffer.length) {
      const grown = new Uint8Array(Math.max(2 * this.buffer.length, this.used + size));
      grown.set(this.buffer.subarray(0, this.used));
      this.buffer = grown;
    }
    let at = this.used;
    this.buffer.set(macUtf8, at);
    at += macUtf8.length;
    this.buffer[at++] = SPACE;
    this.buffer.set(bodyUtf8, at);
    at += bodyUtf8.length;
    this.buffer[at++] = NEWLINE;
    this.used = at;
    this.count++;
  }

  /** Adds a stored row's leaf from its mac and its canonical body's text. */
  addText(mac: string, canonicalBody: string): void {
    this.add(encoder.encode(mac), encoder.encode(canonicalBody));
  }

  /** The root after these leaves: SHA-256(ROOT_LABEL ‖ previous ‖ leaves). */
  async rootAfter(previous: Uint8Array): Promise<Uint8Array> {
    const leaves = this.buffer.subarray(LEAVES_AT, this.used);
    if (previous.length !== ROOT_BYTES) {
      // Only a stored root someone damaged: hashed as given, so the log goes on and every
      // checkpoint after it shows the damage (no prover's root matches).
      const out = new Uint8Array(ROOT_LABEL.length + previous.length + leaves.length);
      out.set(ROOT_LABEL, 0);
      out.set(previous, ROOT_LABEL.length);
      out.set(leaves, ROOT_LABEL.length + previous.length);
      return new Uint8Array(await crypto.subtle.digest("SHA-256", out));
    }
    this.buffer.set(ROOT_LABEL, 0);
    this.buffer.set(previous, ROOT_LABEL.length);
    return new Uint8Array(await crypto.subtle.digest("SHA-256", this.buffer.subarray(0, this.used)));
  }

  /** Starts the next interval (after a boundary). */
  clear(): void {
    this.used = LEAVES_AT;
    this.count = 0;
  }
}

/** The root after the leaves since the previous boundary. */
export function nextRoot(previous: Uint8Array, leaves: readonly Leaf[]): Promise<Uint8Array> {
  const pending = new RootLeaves();
  for (const leaf of leaves) pending.addText(leaf.mac, leaf.body);
  return pending.rootAfter(previous);
}

// --- the checkpoint body --------------------------------------------------------------

export interface CheckpointFields {
  /** `personalclaw/sel/<log id>`: names the log and its key. */
  origin: string;
  /** The seq of the newest row covered (rows are gapless from 1: the log's size). */
  seq: number;
  /** The keyless root over every row up to seq, base64. */
  root: string;
  /** That row's mac (the HMAC chain's head). */
  mac: string;
  /** When the log signed it, ISO-8601 UTC. */
  time: string;
}

export function originOf(logId: string): string {
  return `personalclaw/sel/${logId}`;
}

/** origin, size and root (the three C2SP checkpoint lines), then `mac` and `time` extension lines. */
export function checkpointBody(fields: CheckpointFields): string {
  return `${fields.origin}\n${fields.seq}\n${fields.root}\nmac ${fields.mac}\ntime ${fields.time}\n`;
}

export function parseCheckpointBody(body: string): CheckpointFields | null {
  const match =
    /^([^\n]+)\n(0|[1-9][0-9]{0,15})\n([A-Za-z0-9+/]{43}=)\nmac ([0-9a-f]{64})\ntime ([0-9T:.Z-]{20,30})\n$/.exec(body);
  if (!match) return null;
  return { origin: match[1]!, seq: Number(match[2]), root: match[3]!, mac: match[4]!, time: match[5]! };
}

// --- keys -------------------------------------------------------------------------------

async function keyId(name: string, type: number, publicRaw: Uint8Array): Promise<Uint8Array> {
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", concat([encoder.encode(`${name}\n`), Uint8Array.of(type), publicRaw])),
  );
  return digest.slice(0, 4);
}

/** The C2SP verifier key: `<name>+<hex key id>+<base64(0x01 ‖ public key)>`, all a checker needs. */
export async function verifierKey(
  name: string,
  publicRaw: Uint8Array,
  type: "note" | "cosignature" = "note",
): Promise<string> {
  const code = type === "note" ? ED25519_NOTE_TYPE : COSIGNATURE_TYPE;
  const id = await keyId(name, code, publicRaw);
  return `${name}+${hexOf(id)}+${toBase64(concat([Uint8Array.of(code), publicRaw]))}`;
}

/** Reads a verifier key: a note key (type 0x01) or a witness's cosignature key (0x04). */
export function parseVerifierKey(
  vkey: string,
): { name: string; publicRaw: Uint8Array; type: "note" | "cosignature" } | null {
  const match = /^([^+\s]+)\+([0-9a-f]{8})\+([A-Za-z0-9+/=]+)$/.exec(vkey.trim());
  if (!match) return null;
  const bytes = fromBase64(match[3]!);
  if (bytes === null || bytes.length !== 33 || (bytes[0] !== ED25519_NOTE_TYPE && bytes[0] !== COSIGNATURE_TYPE))
    return null;
  return { name: match[1]!, publicRaw: bytes.slice(1), type: bytes[0] === ED25519_NOTE_TYPE ? "note" : "cosignature" };
}

export interface SigningKey {
  name: string;
  privateKey: CryptoKey;
  publicRaw: Uint8Array;
}

/** A fresh Ed25519 key pair; the private half as PKCS#8 for storage. */
export async function generateSigningKey(): Promise<{ pkcs8: Uint8Array; publicRaw: Uint8Array }> {
  const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"])) as CryptoKeyPair;
  const pkcs8 = new Uint8Array((await crypto.subtle.exportKey("pkcs8", pair.privateKey)) as ArrayBuffer);
  const publicRaw = new Uint8Array((await crypto.subtle.exportKey("raw", pair.publicKey)) as ArrayBuffer);
  return { pkcs8, publicRaw };
}

export async function importSigningKey(name: string, pkcs8: Uint8Array, publicRaw: Uint8Array): Promise<SigningKey> {
  const privateKey = await crypto.subtle.importKey("pkcs8", bufferOf(pkcs8), { name: "Ed25519" }, false, ["sign"]);
  return { name, privateKey, publicRaw };
}

function importPublic(publicRaw: Uint8Array): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", bufferOf(publicRaw), { name: "Ed25519" }, false, ["verify"]);
}

// --- signed notes -------------------------------------------------------------------------

/** The note: body, a blank line, `— <name> <base64(key id ‖ signature)>`. */
export async function signNote(body: string, key: SigningKey): Promise<string> {
  const signature = new Uint8Array(await crypto.subtle.sign("Ed25519", key.privateKey, encoder.encode(body)));
  const id = await keyId(key.name, ED25519_NOTE_TYPE, key.publicRaw);
  return `${body}\n${EM_DASH} ${key.name} ${toBase64(concat([id, signature]))}\n`;
}

/** Splits a note into its body and signature lines; null when it is not a note. */
export function splitNote(note: string): { body: string; signatures: string[] } | null {
  const at = note.lastIndexOf("\n\n");
  if (at < 0 || !note.endsWith("\n")) return null;
  const body = note.slice(0, at + 1);
  const lines = note.slice(at + 2, -1).split("\n");
  if (lines.length === 0 || lines.some((line) => !line.startsWith(`${EM_DASH} `))) return null;
  return { body, signatures: lines };
}

export type OpenedNote = { ok: true; body: string; checkpoint: CheckpointFields } | { ok: false; reason: string };

/** Verifies a checkpoint note with one verifier key: a signature line by that key must verify. */
export async function openCheckpoint(note: string, vkey: string): Promise<OpenedNote> {
  const key = parseVerifierKey(vkey);
  if (key === null || key.type !== "note")
    return { ok: false, reason: "the public key is not a verifier key (<name>+<id>+<key>)" };
  const parts = splitNote(note);
  if (parts === null) return { ok: false, reason: "not a signed note" };
  const checkpoint = parseCheckpointBody(parts.body);
  if (checkpoint === null) return { ok: false, reason: "not a security-log checkpoint" };
  const id = await keyId(key.name, ED25519_NOTE_TYPE, key.publicRaw);
  const publicKey = await importPublic(key.publicRaw);
  for (const line of parts.signatures) {
    const [, name, encoded] = line.split(" ");
    if (name !== key.name || encoded === undefined) continue;
    const bytes = fromBase64(encoded);
    if (bytes === null || bytes.length !== 68 || !bytes.slice(0, 4).every((b, i) => b === id[i])) continue;
    if (await crypto.subtle.verify("Ed25519", publicKey, bufferOf(bytes.slice(4)), encoder.encode(parts.body))) {
      return { ok: true, body: parts.body, checkpoint };
    }
  }
  return { ok: false, reason: `no valid signature by ${key.name}` };
}

// --- cosignatures (a witness's) -----------------------------------------------------------

function cosignedMessage(body: string, timeSeconds: number): Uint8Array<ArrayBuffer> {
  return bufferOf(encoder.encode(`cosignature/v1\ntime ${timeSeconds}\n${body}`));
}

/** A witness's signature line over a checkpoint body at a time (whole seconds). */
export async function cosign(body: string, key: SigningKey, timeSeconds: number): Promise<string> {
  const signature = new Uint8Array(
    await crypto.subtle.sign("Ed25519", key.privateKey, cosignedMessage(body, timeSeconds)),
  );
  const id = await keyId(key.name, COSIGNATURE_TYPE, key.publicRaw);
  const time = new Uint8Array(8);
  new DataView(time.buffer).setBigUint64(0, BigInt(timeSeconds));
  return `${EM_DASH} ${key.name} ${toBase64(concat([id, time, signature]))}`;
}

/** Checks a cosignature line over a checkpoint body against the witness's verifier key; answers its time. */
export async function verifyCosignature(
  body: string,
  line: string,
  witnessVkey: string,
): Promise<{ ok: true; timeSeconds: number } | { ok: false }> {
  const key = parseVerifierKey(witnessVkey);
  if (key === null || key.type !== "cosignature") return { ok: false };
  const [dash, name, encoded] = line.split(" ");
  if (dash !== EM_DASH || name !== key.name || encoded === undefined) return { ok: false };
  const bytes = fromBase64(encoded);
  if (bytes === null || bytes.length !== 76) return { ok: false };
  const id = await keyId(key.name, COSIGNATURE_TYPE, key.publicRaw);
  if (!bytes.slice(0, 4).every((b, i) => b === id[i])) return { ok: false };
  const timeSeconds = Number(new DataView(bytes.buffer, bytes.byteOffset + 4, 8).getBigUint64(0));
  const ok = await crypto.subtle.verify(
    "Ed25519",
    await importPublic(key.publicRaw),
    bufferOf(bytes.slice(12)),
    cosignedMessage(body, timeSeconds),
  );
  return ok ? { ok: true, timeSeconds } : { ok: false };
}
