// Forward-secure epochs as the log runs them: the key kept in its own chain_key table (the
// binding only seeds a log that has none), stepped one way at every rotation and on the clock,
// the old key's bytes zeroed once the row opening the new epoch is written. The one-way step
// itself is epoch-key.ts.
import { hexOf } from "../../kernel/crypto/hex";
import { sealRow, type MacKey } from "../../kernel/chain/chain-mac";
import { EPOCH_KIND, importMacKey, stepEpochKey } from "../../kernel/chain/epoch-key";
import type { LogChain } from "./log-chain";
import type { SqlPort } from "./log-core";

/** The epoch the log signs in, its key's bytes and when it began. */
export interface EpochState {
  epoch: number;
  bytes: Uint8Array;
  startedMs: number;
}

/** The key a log stored at its first open with epochs; undefined before that. */
export function storedChainKey(sql: SqlPort): { epoch: number; key_hex: string; started_at: string } | undefined {
  return sql
    .exec<{ epoch: number; key_hex: string; started_at: string }>(
      "SELECT epoch, key_hex, started_at FROM chain_key WHERE id = 1",
    )
    .toArray()[0];
}

/** Stores the seed's bytes as epoch 0's key, starting now: a log's first open with epochs. */
export function storeFirstEpoch(sql: SqlPort, keyBytes: Uint8Array, now: () => number): EpochState {
  const startedAt = new Date(now()).toISOString();
  sql.exec("INSERT INTO chain_key (id, epoch, key_hex, started_at) VALUES (1, 0, ?, ?)", hexOf(keyBytes), startedAt);
  return { epoch: 0, bytes: keyBytes, startedMs: Date.parse(startedAt) };
}

/** The next epoch, its key, and the two steps that make it the log's. */
export interface NextEpoch {
  epoch: number;
  key: MacKey;
  /** Stores the new key over the old one: run inside the transaction that writes the row opening the epoch. */
  commit: (startedAt: string) => void;
  /** Zeroes the old key's bytes and signs with the new key from here on: run once that row is written. */
  adopt: (startedAt: string) => void;
}

/**
 * The next epoch's key, one way from the current one; `commit` (inside the transaction that
 * writes the row opening the epoch) stores it over the old one, and the old bytes are zeroed.
 */
export function nextEpoch(chain: LogChain): NextEpoch {
  const current = chain.epochState!;
  const bytes = stepEpochKey(current.bytes);
  const key = importMacKey(bytes);
  const epoch = current.epoch + 1;
  return {
    epoch,
    key,
    commit: (startedAt) =>
      chain.sql.exec(
        "UPDATE chain_key SET epoch = ?, key_hex = ?, started_at = ? WHERE id = 1",
        epoch,
        hexOf(bytes),
        startedAt,
      ),
    adopt: (startedAt) => {
      // The old key's bytes are zeroed; its prepared key is dropped (a verification walking
      // meanwhile may still hold it for the rows of the old epoch).
      current.bytes.fill(0);
      chain.epochState = { epoch, bytes, startedMs: Date.parse(startedAt) };
      chain.key = key;
    },
  };
}

/** True when the clock says the next row opens a new epoch. */
export function isEpochDue(chain: LogChain, epochs: { everyMs: number } | undefined): boolean {
  return (
    chain.epochState !== null && epochs !== undefined && chain.now() - chain.epochState.startedMs >= epochs.everyMs
  );
}

/** The clock's epoch step: a sel.epoch row, signed with the new key, opens it. */
export function openEpochLocked(chain: LogChain): void {
  const next = nextEpoch(chain);
  const fields = chain.nextFields({
    kind: EPOCH_KIND,
    principal: "gateway",
    outcome: "info",
    subject: `epoch ${next.epoch}`,
    detail: { epoch: next.epoch, reason: "interval" },
  });
  const sealed = sealRow(next.key, fields);
  chain.sql.transact(() => {
    chain.insertRow(fields, sealed);
    next.commit(fields.ts);
  });
  next.adopt(fields.ts);
  chain.advance(fields, sealed);
}
