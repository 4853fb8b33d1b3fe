// The log's segments over time: a rotation seals the live segment (SEL-08) and opens the next,
// ending an epoch and an interval of the keyless root with it; retention removes sealed segments
// past their age, then oldest-first over the archive ceiling (SEL-07). Each is a row of the chain
// itself (sel.rotated, sel.segment_removed), so verification can tell a removal from a cut.
import type { RetentionResult, RotateResult } from "../../kernel/contracts/security-event";
import { maskCredentialShapes } from "../../kernel/text/text-safety";
import { sealRow } from "../../kernel/chain/chain-mac";
import { toBase64 } from "../../kernel/chain/checkpoint";
import type { LogChain } from "./log-chain";
import { saveRoot } from "./log-checkpoints";
import type { LogLimits } from "./log-core";
import { nextEpoch } from "./log-epochs";
import { maskOrWithhold, truncateText, type TextMasker } from "./redact";
import { ROTATED_KIND, SEGMENT_REMOVED_KIND } from "../../kernel/chain/verify-chain";

/** A sealed segment as the segments table holds it. */
type SealedSegment = {
  id: number;
  sealed_at: string;
  first_seq: number;
  last_seq: number;
  last_mac: string;
  bytes: number;
};

/**
 * Seals the live segment with a sel.rotated row that opens the next one (signed with the next
 * epoch's key, naming the root before it), then runs `retain`; an empty live segment is left alone.
 */
export async function rotateLocked(
  chain: LogChain,
  reason: string,
  maskers: readonly TextMasker[] | undefined,
  retain: () => Promise<RetentionResult>,
): Promise<RotateResult> {
  const sealed = chain.live;
  if (chain.headSeq < sealed.firstSeq) {
    return { rotated: false, sealed_segment: null, segment: sealed.id, seq: chain.headSeq };
  }
  const fields = chain.nextFields(
    {
      kind: ROTATED_KIND,
      principal: "gateway",
      outcome: "info",
      subject: `segment ${sealed.id} sealed`,
      detail: {
        reason: truncateText(maskOrWithhold(reason, maskers ?? [maskCredentialShapes])),
        sealed_segment: sealed.id,
        first_seq: sealed.firstSeq,
        last_seq: chain.headSeq,
        last_mac: chain.headMac,
        bytes: sealed.bytes,
      },
    },
    sealed.id + 1,
  );
  // A rotation ends an interval of the keyless root (its row names the root before it) and an epoch.
  const root = chain.rootState ? await chain.rootState.pending.rootAfter(chain.rootState.root) : null;
  if (root !== null) fields.detail.root = toBase64(root);
  const next = chain.epochState ? nextEpoch(chain) : null;
  if (next !== null) fields.detail.epoch = next.epoch;
  const sealedRow = sealRow(next?.key ?? chain.key, fields);
  chain.sql.transact(() => {
    next?.commit(fields.ts);
    if (root !== null) saveRoot(chain.sql, chain.headSeq, root, null);
    chain.sql.exec(
      "UPDATE segments SET sealed_at = ?, last_seq = ?, last_mac = ?, bytes = ? WHERE id = ?",
      fields.ts,
      chain.headSeq,
      chain.headMac,
      sealed.bytes,
      sealed.id,
    );
    chain.sql.exec(
      "INSERT INTO segments (id, started_at, sealed_at, first_seq, last_seq, last_mac, bytes) VALUES (?, ?, NULL, ?, NULL, NULL, 0)",
      fields.segment,
      fields.ts,
      fields.seq,
    );
    chain.insertRow(fields, sealedRow);
  });
  chain.live = { id: fields.segment, startedAt: fields.ts, firstSeq: fields.seq, bytes: 0 };
  next?.adopt(fields.ts);
  if (root !== null) {
    chain.rootState!.pending.clear();
    chain.rootState = { ...chain.rootState!, boundarySeq: fields.seq - 1, root };
  }
  chain.advance(fields, sealedRow);
  await retain();
  return { rotated: true, sealed_segment: sealed.id, segment: fields.segment, seq: fields.seq };
}

/** The sealed segments to remove at `nowMs`: those past the retention age, then oldest-first over the ceiling. */
function retentionPlan(
  chain: LogChain,
  nowMs: number,
  limits: LogLimits,
): Array<{ segment: SealedSegment; reason: "age" | "size" }> {
  const sealed = chain.sql
    .exec<SealedSegment>(
      "SELECT id, sealed_at, first_seq, last_seq, last_mac, bytes FROM segments WHERE sealed_at IS NOT NULL ORDER BY id",
    )
    .toArray();
  const cutoff = nowMs - limits.retentionMs;
  let archived = sealed.reduce((sum, segment) => sum + segment.bytes, 0);
  const plan: Array<{ segment: SealedSegment; reason: "age" | "size" }> = [];
  for (const segment of sealed) {
    if (Date.parse(segment.sealed_at) >= cutoff) break;
    plan.push({ segment, reason: "age" });
    archived -= segment.bytes;
  }
  for (const segment of sealed.slice(plan.length)) {
    if (archived <= limits.archiveCeilingBytes) break;
    plan.push({ segment, reason: "size" });
    archived -= segment.bytes;
  }
  return plan;
}

/** Removes what the retention plan names, each removal a sel.segment_removed row written with it. */
export async function retentionLocked(chain: LogChain, nowMs: number, limits: LogLimits): Promise<RetentionResult> {
  const removed: RetentionResult["removed"] = [];
  for (const { segment, reason } of retentionPlan(chain, nowMs, limits)) {
    const fields = chain.nextFields({
      kind: SEGMENT_REMOVED_KIND,
      principal: "gateway",
      outcome: "info",
      subject: `segment ${segment.id} removed`,
      detail: {
        reason,
        segment: segment.id,
        first_seq: segment.first_seq,
        last_seq: segment.last_seq,
        last_mac: segment.last_mac,
        bytes: segment.bytes,
        sealed_at: segment.sealed_at,
      },
    });
    const sealed = sealRow(chain.key, fields);
    chain.sql.transact(() => {
      chain.sql.exec("DELETE FROM events WHERE seq BETWEEN ? AND ?", segment.first_seq, segment.last_seq);
      chain.sql.exec("DELETE FROM segments WHERE id = ?", segment.id);
      chain.insertRow(fields, sealed);
    });
    chain.advance(fields, sealed);
    removed.push({
      segment: segment.id,
      first_seq: segment.first_seq,
      last_seq: segment.last_seq,
      last_mac: segment.last_mac,
      reason,
    });
  }
  return { removed, deferred: false };
}
