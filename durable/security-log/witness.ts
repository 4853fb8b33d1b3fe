// This gateway as a witness for another log: it cosigns a checkpoint only if the note is
// signed by a key its owner admitted (admitWitnessLog), by the key it first saw for that origin,
// and extends the checkpoint it holds (a larger seq, or the same seq with the same root). The
// owner's admission is the only way in: were any caller able to register a log, 100 made-up
// logs would fill the witness and every real one would be refused. It keeps one checkpoint per
// origin for at most MAX_WITNESSED_LOGS admitted logs; its refusals are the route's rows.
import { GatewayError } from "../../kernel/contracts/errors";
import { cosign, openCheckpoint, parseVerifierKey, verifierKey, type SigningKey } from "../../kernel/chain/checkpoint";
import type { SqlPort } from "./log-core";
import type { WitnessAdmitted } from "../../kernel/contracts/security-event";

export const MAX_WITNESSED_LOGS = 100;

export interface WitnessAnswer {
  /** The cosignature line (C2SP tlog-cosignature/v1) over the checkpoint body. */
  cosignature: string;
  /** The witness's verifier key, which checks that line. */
  witness_key: string;
  witness: string;
}

/** The witness's name for a log id: distinct from the log's own origin. */
export function witnessName(logId: string): string {
  return `personalclaw/witness/${logId}`;
}

/** The owner admits the log whose checkpoints `vkey` signs; at most MAX_WITNESSED_LOGS are admitted. */
export function admitWitnessLog(sql: SqlPort, vkey: string, nowMs: number): WitnessAdmitted {
  const key = vkey.trim();
  const parsed = parseVerifierKey(key);
  if (parsed === null || parsed.type !== "note")
    throw new GatewayError("witness_checkpoint_invalid", { vars: { reason: "the key is not a note verifier key" } });
  const count = () => sql.exec<{ n: number }>("SELECT count(*) AS n FROM witness_admitted").toArray()[0]?.n ?? 0;
  const known = sql.exec("SELECT 1 FROM witness_admitted WHERE vkey = ?", key).toArray().length > 0;
  if (!known && count() >= MAX_WITNESSED_LOGS)
    throw new GatewayError("witness_full", { vars: { max: MAX_WITNESSED_LOGS, origin: parsed.name } });
  if (!known)
    sql.exec(
      "INSERT INTO witness_admitted (vkey, origin, admitted_at) VALUES (?, ?, ?)",
      key,
      parsed.name,
      new Date(nowMs).toISOString(),
    );
  return { origin: parsed.name, public_key: key, admitted_logs: count() };
}

/** True when the witness's owner admitted the log `vkey` signs. */
function isAdmitted(sql: SqlPort, vkey: string): boolean {
  return sql.exec("SELECT 1 FROM witness_admitted WHERE vkey = ?", vkey.trim()).toArray().length > 0;
}

export async function cosignAsWitness(
  sql: SqlPort,
  signer: SigningKey,
  logId: string,
  note: string,
  vkey: string,
  nowMs: number,
): Promise<WitnessAnswer> {
  // Checked first, before any signature work: a caller the owner did not admit costs a lookup.
  if (!isAdmitted(sql, vkey))
    throw new GatewayError("witness_log_not_admitted", { vars: { key: vkey.trim().slice(0, 80) } });
  const opened = await openCheckpoint(note, vkey);
  if (!opened.ok) throw new GatewayError("witness_checkpoint_invalid", { vars: { reason: opened.reason } });
  const { checkpoint, body } = opened;
  if (parseVerifierKey(vkey)!.name !== checkpoint.origin) {
    throw new GatewayError("witness_checkpoint_invalid", {
      vars: { reason: "the key's name is not the checkpoint's origin" },
    });
  }
  const held = sql
    .exec<{ vkey: string; seq: number; root: string }>(
      "SELECT vkey, seq, root FROM witnessed_logs WHERE origin = ?",
      checkpoint.origin,
    )
    .toArray()[0];
  if (held !== undefined) {
    if (held.vkey !== vkey.trim())
      throw new GatewayError("witness_key_changed", { vars: { origin: checkpoint.origin } });
    if (checkpoint.seq < held.seq || (checkpoint.seq === held.seq && checkpoint.root !== held.root)) {
      throw new GatewayError("witness_rollback", {
        vars: { origin: checkpoint.origin, held: held.seq, offered: checkpoint.seq },
      });
    }
  }
  const name = witnessName(logId);
  const key = { ...signer, name };
  const cosignature = await cosign(body, key, Math.floor(nowMs / 1000));
  sql.exec(
    "INSERT INTO witnessed_logs (origin, vkey, seq, root, note, cosigned_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (origin) DO UPDATE SET seq = excluded.seq, root = excluded.root, note = excluded.note, cosigned_at = excluded.cosigned_at",
    checkpoint.origin,
    vkey.trim(),
    checkpoint.seq,
    checkpoint.root,
    note,
    new Date(nowMs).toISOString(),
  );
  return { cosignature, witness_key: await verifierKey(name, key.publicRaw, "cosignature"), witness: name };
}

/** The newest checkpoint this witness cosigned for an origin: what the owner compares a log against. */
export function witnessedCheckpoint(
  sql: SqlPort,
  origin: string,
): { note: string; seq: number; cosigned_at: string } | null {
  return (
    sql
      .exec<{ note: string; seq: number; cosigned_at: string }>(
        "SELECT note, seq, cosigned_at FROM witnessed_logs WHERE origin = ?",
        origin,
      )
      .toArray()[0] ?? null
  );
}
