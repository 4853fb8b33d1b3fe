// Whether a stored log still extends a checkpoint, with no key at all: the rows up to the
// checkpoint's seq must hash to its root (so none of them changed, moved or vanished), that
// seq must hold its mac, and every later row must link to the one before it. Pure: the CLI
// runs it over the SQLite file offline; the gateway runs it over its own storage.
import { canonicalRowBody, type StoredRow } from "./chain-mac";
import {
  CHECKPOINT_KIND,
  COSIGNED_KIND,
  fromBase64,
  GENESIS_ROOT,
  leafOf,
  nextRoot,
  toBase64,
  type CheckpointFields,
  type Leaf,
} from "./checkpoint";
import { ROTATED_KIND } from "./verify-chain";

/**
 * `extends`: the log holds the checkpoint's rows unchanged and continues from them.
 * `forked`: the rows up to its seq are not the rows it signed (rewritten, reordered, edited).
 * `truncated`: the log ends before its seq. `removed`: retention removed its rows (nothing to compare).
 * `broken`: a later row does not link to the one before it.
 */
export type CheckpointStanding = "extends" | "forked" | "truncated" | "removed" | "broken";

export interface CheckpointProof {
  standing: CheckpointStanding;
  /** Rows hashed or linked. */
  checked: number;
  /**
   * Where the disagreement shows: for `forked` the checkpoint's own seq (a root names no single
   * row: some row at or before it changed), for `broken` the row that does not link, for
   * `truncated` the first missing seq.
   */
  first_bad_seq?: number;
}

function rootBefore(row: StoredRow): Uint8Array | null {
  // The first kept row after retention is a sel.rotated row naming the root before it.
  if (row.kind !== ROTATED_KIND || typeof row.detail.root !== "string") return null;
  const bytes = fromBase64(row.detail.root);
  return bytes !== null && bytes.length === 32 ? bytes : null;
}

/** True for a row that ends the interval before it (the log computed a root there). */
function opensInterval(row: StoredRow): boolean {
  return row.kind === CHECKPOINT_KIND || (row.kind === ROTATED_KIND && typeof row.detail.root === "string");
}

/** Walks the rows in seq order and answers where the log stands against the checkpoint. */
export async function provesCheckpoint(
  rows: Iterable<StoredRow> | AsyncIterable<StoredRow>,
  checkpoint: CheckpointFields,
): Promise<CheckpointProof> {
  let root: Uint8Array | null = null;
  let leaves: Leaf[] = [];
  let previous: StoredRow | null = null;
  let checked = 0;
  let reached = false;
  for await (const row of rows) {
    if (previous === null) {
      if (checkpoint.seq < row.seq) return { standing: "removed", checked };
      root = row.seq === 1 ? GENESIS_ROOT : rootBefore(row);
      if (root === null) return { standing: "forked", checked, first_bad_seq: row.seq };
    } else {
      if (row.seq !== previous.seq + 1 || row.prev_mac !== previous.mac) {
        return { standing: reached ? "broken" : "forked", checked, first_bad_seq: row.seq };
      }
      if (!reached && opensInterval(row)) {
        root = await nextRoot(root!, leaves);
        leaves = [];
      }
    }
    if (!reached) {
      leaves.push(leafOf(row.mac, canonicalRowBody(row)));
      if (row.seq === checkpoint.seq) {
        const candidate = toBase64(await nextRoot(root!, leaves));
        if (candidate !== checkpoint.root || row.mac !== checkpoint.mac)
          return { standing: "forked", checked, first_bad_seq: row.seq };
        reached = true;
      }
    }
    previous = row;
    checked++;
  }
  if (previous === null) return { standing: checkpoint.seq === 0 ? "extends" : "truncated", checked };
  if (!reached)
    return { standing: checkpoint.seq === 0 ? "extends" : "truncated", checked, first_bad_seq: previous.seq + 1 };
  return { standing: "extends", checked };
}

/** A witness's cosignature as the log recorded it. */
export interface RecordedCosignature {
  seq: number;
  checkpoint_seq: number;
  witness: string;
  body: string;
  cosignature: string;
}

/** Reads a sel.cosigned row; null when it is not one. */
export function cosignatureFromRow(row: StoredRow): RecordedCosignature | null {
  if (row.kind !== COSIGNED_KIND) return null;
  const { checkpoint_seq, witness, body, cosignature } = row.detail;
  if (
    typeof checkpoint_seq !== "number" ||
    typeof witness !== "string" ||
    typeof body !== "string" ||
    typeof cosignature !== "string"
  )
    return null;
  return { seq: row.seq, checkpoint_seq, witness, body, cosignature };
}
