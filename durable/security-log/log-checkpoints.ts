// Signed checkpoints as the log runs them: its identity (a log id and an Ed25519 key, made once
// and kept), the keyless root's state since the last checkpoint, the sel.checkpoint row that
// carries each signed note, and the export the owner copies elsewhere. The root, the notes and
// the keys themselves are checkpoint.ts.
import { hexOf } from "../../kernel/crypto/hex";
import { canonicalRowBody, sealRow, type StoredRow } from "../../kernel/chain/chain-mac";
import {
  checkpointBody,
  CHECKPOINT_KIND,
  COSIGNED_KIND,
  fromBase64,
  generateSigningKey,
  GENESIS_ROOT,
  importSigningKey,
  originOf,
  RootLeaves,
  signNote,
  toBase64,
  verifierKey,
  type SigningKey,
} from "../../kernel/chain/checkpoint";
import type { LogChain } from "./log-chain";
import type { PreparedEvent, SqlPort } from "./log-core";
import { newestRowOfKind, rowsInSeqOrder } from "./stored-rows";

/** The checkpoint the log signed last, as exported. */
export interface CheckpointExport {
  /** The signed note (C2SP signed-note text). */
  note: string;
  /** The C2SP verifier key that checks it (the log's public key). */
  public_key: string;
  origin: string;
  seq: number;
  /** The seq of the sel.checkpoint row that holds it. */
  row_seq: number;
}

/** The keyless root as of the last checkpoint (or rotation) and the leaves of the rows since. */
export interface RootState {
  boundarySeq: number;
  root: Uint8Array;
  checkpointMs: number;
  /** Leaves of the rows after the boundary, in seq order. */
  pending: RootLeaves;
}

/** Who signs this log's checkpoints: its id (its origin's name) and key pair. */
export interface LogIdentity {
  logId: string;
  signer: SigningKey;
  /** The C2SP verifier key of `signer`. */
  publicKey: string;
}

/** Loads or makes the log's id and signing key, and the root state with the leaves since its boundary. */
export async function openCheckpoints(chain: LogChain): Promise<LogIdentity> {
  let identity = chain.sql
    .exec<{ log_id: string; signing_pkcs8: string; public_key: string }>(
      "SELECT log_id, signing_pkcs8, public_key FROM log_identity WHERE id = 1",
    )
    .toArray()[0];
  if (identity === undefined) {
    const { pkcs8, publicRaw } = await generateSigningKey();
    const id = hexOf(crypto.getRandomValues(new Uint8Array(8)));
    identity = { log_id: id, signing_pkcs8: toBase64(pkcs8), public_key: toBase64(publicRaw) };
    chain.sql.exec(
      "INSERT INTO log_identity (id, log_id, signing_pkcs8, public_key) VALUES (1, ?, ?, ?)",
      identity.log_id,
      identity.signing_pkcs8,
      identity.public_key,
    );
  }
  const logId = identity.log_id;
  const publicRaw = fromBase64(identity.public_key)!;
  const signer = await importSigningKey(originOf(logId), fromBase64(identity.signing_pkcs8)!, publicRaw);
  const publicKey = await verifierKey(originOf(logId), publicRaw);

  const state = chain.sql
    .exec<{ boundary_seq: number; root: string; checkpoint_at: string | null }>(
      "SELECT boundary_seq, root, checkpoint_at FROM root_state WHERE id = 1",
    )
    .toArray()[0];
  const boundarySeq = state?.boundary_seq ?? 0;
  const root = state ? fromBase64(state.root)! : GENESIS_ROOT;
  const pending = new RootLeaves();
  for (const row of rowsInSeqOrder(chain.sql, boundarySeq)) pending.addText(row.mac, canonicalRowBody(row));
  const checkpointMs = state?.checkpoint_at ? Date.parse(state.checkpoint_at) : chain.now();
  chain.rootState = { boundarySeq, root, checkpointMs, pending };
  return { logId, signer, publicKey };
}

/** True when the rows since the last checkpoint, or the time since it, call for the next. */
export function isCheckpointDue(
  chain: LogChain,
  checkpoints: { everyRows: number; everyMs: number } | undefined,
): boolean {
  const state = chain.rootState;
  if (state === null || checkpoints === undefined) return false;
  return state.pending.count >= checkpoints.everyRows || chain.now() - state.checkpointMs >= checkpoints.everyMs;
}

/** Signs the head: closes the interval at the head seq and appends the sel.checkpoint row carrying the note. */
export async function checkpointLocked(chain: LogChain, identity: LogIdentity): Promise<void> {
  const state = chain.rootState!;
  const root = await state.pending.rootAfter(state.root);
  const time = chain.isoNow();
  const body = checkpointBody({
    origin: originOf(identity.logId),
    seq: chain.headSeq,
    root: toBase64(root),
    mac: chain.headMac,
    time,
  });
  const note = await signNote(body, identity.signer);
  const covered = { seq: chain.headSeq, root: toBase64(root), mac: chain.headMac };
  const fields = chain.nextFields({
    kind: CHECKPOINT_KIND,
    principal: "gateway",
    outcome: "info",
    subject: `checkpoint ${covered.seq}`,
    detail: { ...covered, time, note },
  });
  const sealed = sealRow(chain.key, fields);
  chain.sql.transact(() => {
    chain.insertRow(fields, sealed);
    saveRoot(chain.sql, covered.seq, root, time);
  });
  state.pending.clear();
  chain.rootState = { boundarySeq: covered.seq, root, checkpointMs: Date.parse(time), pending: state.pending };
  chain.advance(fields, sealed);
}

/** Stores the root as of `boundarySeq`; a null time (a rotation's) keeps the last checkpoint's. */
export function saveRoot(sql: SqlPort, boundarySeq: number, root: Uint8Array, checkpointAt: string | null): void {
  sql.exec(
    "INSERT INTO root_state (id, boundary_seq, root, checkpoint_at) VALUES (1, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET boundary_seq = excluded.boundary_seq, root = excluded.root, checkpoint_at = COALESCE(excluded.checkpoint_at, root_state.checkpoint_at)",
    boundarySeq,
    toBase64(root),
    checkpointAt,
  );
}

/** The newest sel.checkpoint row; null before the first. */
export function latestCheckpointRow(sql: SqlPort): StoredRow | null {
  return newestRowOfKind(sql, CHECKPOINT_KIND);
}

/** A sel.checkpoint row as the owner exports it, with the key that checks it. */
export function checkpointExport(row: StoredRow, identity: LogIdentity): CheckpointExport {
  return {
    note: String(row.detail.note),
    public_key: identity.publicKey,
    origin: originOf(identity.logId),
    seq: Number(row.detail.seq),
    row_seq: row.seq,
  };
}

/** The sel.cosigned row recording a witness's cosignature of one of this log's checkpoints. */
export function cosignedEvent(input: {
  checkpoint_seq: number;
  witness: string;
  body: string;
  cosignature: string;
}): PreparedEvent {
  return {
    kind: COSIGNED_KIND,
    principal: "gateway",
    outcome: "info",
    subject: `checkpoint ${input.checkpoint_seq} witnessed`,
    detail: {
      checkpoint_seq: input.checkpoint_seq,
      witness: input.witness,
      body: input.body,
      cosignature: input.cosignature,
    },
  };
}
