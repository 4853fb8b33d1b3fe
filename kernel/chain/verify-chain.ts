// Chain verification: walks rows in seq order, recomputes every mac, checks every link, and
// answers with the first row that is not what the log wrote. Pure: rows come from any
// iterable, so the DO pages them from SQLite and tests hand in arrays.
import type { SecurityLogAnchor, VerifyFailureReason, VerifyResult } from "../contracts/security-event";
import { GENESIS_PREV_MAC, macMatches, type StoredRow } from "./chain-mac";
import { epochOpenedBy, type ChainKeys } from "./epoch-key";

/** First row of every segment after the first: names the sealed segment and continues its chain. */
export const ROTATED_KIND = "sel.rotated";
/** Written when retention removes a sealed segment; the only thing that vouches for a cut chain start. */
export const SEGMENT_REMOVED_KIND = "sel.segment_removed";

/** What a sel.segment_removed row says, plus the seq of that row. */
export interface SegmentRemoval {
  recordSeq: number;
  segment: number;
  first_seq: number;
  last_seq: number;
  last_mac: string;
}

/** Reads a sel.segment_removed row's detail; null when it is not one or is malformed. */
export function removalFromRow(row: StoredRow): SegmentRemoval | null {
  if (row.kind !== SEGMENT_REMOVED_KIND) return null;
  const { segment, first_seq, last_seq, last_mac } = row.detail;
  if (typeof segment !== "number" || typeof first_seq !== "number" || typeof last_seq !== "number") return null;
  if (typeof last_mac !== "string") return null;
  return { recordSeq: row.seq, segment, first_seq, last_seq, last_mac };
}

export interface VerifyChainOptions {
  /** Every sel.segment_removed row in the log (read ahead, because they come after what they vouch for). */
  removalRows?: readonly StoredRow[];
  /** A (seq, mac) pair kept outside the log; detects rows cut off the end. */
  anchor?: SecurityLogAnchor | null;
}

class Failure {
  constructor(
    readonly reason: VerifyFailureReason,
    readonly seq: number,
  ) {}
}

/**
 * Verifies a log. Per row, in this order: seq is the previous seq + 1 (`seq_gap`, naming the
 * first missing seq); prev_mac is the previous row's mac (`chain_broken`); the mac recomputes
 * (`mac_mismatch`); a segment changes only at a sel.rotated row naming the segment it sealed
 * and that segment's last mac (`segment_link_broken`). The oldest row must be seq 1 with the
 * genesis prev_mac, or be vouched for by a verified sel.segment_removed row naming the
 * segment just before it and that segment's last seq and mac (`segment_link_broken`).
 * Finally the anchor's seq must still exist (`truncated`) with the anchor's mac (`forked`).
 *
 * Each row's mac is recomputed with its epoch's key: epoch 0 from seq 1; a `sel.epoch` or
 * `sel.rotated` row naming `epoch` opens that epoch, which must be the next one
 * (`epoch_broken`); a chain start after retention opens the epoch its row names. A row whose
 * epoch key the holder no longer has (the gateway keeps only the current one) is checked for
 * its links only and counted in `macs_unchecked`; the seed's keyring checks every row.
 */
export async function verifyChain(
  keys: ChainKeys,
  rows: Iterable<StoredRow> | AsyncIterable<StoredRow>,
  options: VerifyChainOptions = {},
): Promise<VerifyResult> {
  const removals = (options.removalRows ?? [])
    .map(removalFromRow)
    .filter((removal): removal is SegmentRemoval => removal !== null);
  const anchor = options.anchor ?? null;

  let checked = 0;
  let segments = 0;
  let first: StoredRow | null = null;
  let previous: StoredRow | null = null;
  let vouchingRemoval: SegmentRemoval | null = null;
  let macAtAnchor: string | null = null;
  let epoch = 0;
  let unchecked = 0;

  const fail = (failure: Failure): VerifyResult => ({
    ok: false,
    checked,
    segments,
    first_bad_seq: failure.seq,
    reason: failure.reason,
    ...(unchecked > 0 ? { macs_unchecked: unchecked } : {}),
  });

  for await (const row of rows) {
    if (previous === null) {
      const failure = checkChainStart(row, removals);
      if (failure instanceof Failure) return fail(failure);
      vouchingRemoval = failure;
      first = row;
      segments = 1;
    } else {
      if (row.seq !== previous.seq + 1) return fail(new Failure("seq_gap", previous.seq + 1));
      if (row.prev_mac !== previous.mac) return fail(new Failure("chain_broken", row.seq));
    }
    const opened = epochOpenedBy(row);
    if (opened !== null) {
      if (previous !== null && opened !== epoch + 1) return fail(new Failure("epoch_broken", row.seq));
      epoch = opened;
    }
    const key = await keys.keyFor(epoch);
    if (key === null) unchecked++;
    else if (!macMatches(key, row)) return fail(new Failure("mac_mismatch", row.seq));
    if (previous !== null) {
      const opensSegment = row.segment !== previous.segment;
      if (opensSegment || row.kind === ROTATED_KIND) {
        if (!isRotationLink(previous, row)) return fail(new Failure("segment_link_broken", row.seq));
        segments++;
      }
    }
    if (anchor !== null && row.seq === anchor.seq) macAtAnchor = row.mac;
    previous = row;
    checked++;
  }

  // The removal row that vouched for the chain's start must itself be one of the rows just verified.
  if (first !== null && previous !== null && vouchingRemoval !== null) {
    if (vouchingRemoval.recordSeq < first.seq || vouchingRemoval.recordSeq > previous.seq) {
      return fail(new Failure("segment_link_broken", first.seq));
    }
  }

  if (anchor !== null && anchor.seq > 0) {
    const lastSeq = previous?.seq ?? 0;
    if (anchor.seq > lastSeq) return fail(new Failure("truncated", lastSeq + 1));
    if (first !== null && anchor.seq >= first.seq) {
      if (macAtAnchor !== anchor.mac) return fail(new Failure("forked", anchor.seq));
    } else {
      // The anchored row was in a segment retention removed; a removal row ending there must agree.
      const endingThere = removals.find((removal) => removal.last_seq === anchor.seq);
      if (endingThere !== undefined && endingThere.last_mac !== anchor.mac) {
        return fail(new Failure("forked", anchor.seq));
      }
      if (endingThere === undefined && !removals.some((r) => r.first_seq <= anchor.seq && anchor.seq <= r.last_seq)) {
        return fail(new Failure("truncated", anchor.seq));
      }
    }
  }

  return unchecked > 0 ? { ok: true, checked, segments, macs_unchecked: unchecked } : { ok: true, checked, segments };
}

/** The oldest remaining row is seq 1 from genesis, or a chain start a removal row vouches for. */
function checkChainStart(row: StoredRow, removals: readonly SegmentRemoval[]): Failure | SegmentRemoval | null {
  if (row.seq === 1) return row.prev_mac === GENESIS_PREV_MAC ? null : new Failure("chain_broken", 1);
  const vouching = removals.find(
    (removal) =>
      removal.segment === row.segment - 1 &&
      removal.last_seq === row.seq - 1 &&
      removal.last_mac === row.prev_mac &&
      removal.recordSeq >= row.seq,
  );
  if (vouching === undefined || row.kind !== ROTATED_KIND) return new Failure("segment_link_broken", row.seq);
  return vouching;
}

/** A segment boundary is sound when a sel.rotated row opens segment n+1 naming segment n and its last mac. */
function isRotationLink(previous: StoredRow, row: StoredRow): boolean {
  return (
    row.kind === ROTATED_KIND &&
    row.segment === previous.segment + 1 &&
    row.detail.sealed_segment === previous.segment &&
    row.detail.last_mac === row.prev_mac &&
    row.detail.last_seq === previous.seq
  );
}
