// The owner's witness for the security log: an HTTP endpoint (a second PersonalClaw's
// POST /api/security/witness, or any store answering the same JSON) that is shown each new
// checkpoint and answers a cosignature. The cosignature is checked against the key the witness
// answered when the owner configured it, then recorded in the log (a sel.cosigned row). The
// witness keeps its own copy, out of reach of whoever takes this machine.
import {
  CheckpointExportSchema,
  WitnessAnswerSchema,
  WitnessConfigSchema,
  type CheckpointExportAnswer,
  type WitnessConfig,
} from "../kernel/contracts/security-event";
import { splitNote, verifyCosignature } from "../kernel/chain/checkpoint";
import { writePrivateFile } from "./private-file";
import type { CallGateway } from "./bridge-contract";
import { z } from "zod";
import { readPrivateRecord } from "./private-record";

export const WITNESS_INTERVAL_MS = 5_000;
const WITNESS_TIMEOUT_MS = 10_000;

export function readWitnessConfig(path: string): WitnessConfig | null {
  return readPrivateRecord(path, WitnessConfigSchema);
}

export function writeWitnessConfig(path: string, config: WitnessConfig): void {
  writePrivateFile(path, `${JSON.stringify(config, null, 2)}\n`);
}

export type WitnessPost =
  | { ok: true; cosignature: string; witness_key: string; witness: string; body: string; timeSeconds: number }
  | { ok: false; reason: string };

/**
 * Shows one checkpoint to the witness. `expectedKey` is the key it answered before (null when
 * the owner is configuring it now); a cosignature that does not verify with it is refused.
 */
export async function postToWitness(
  url: string,
  checkpoint: CheckpointExportAnswer,
  expectedKey: string | null,
): Promise<WitnessPost> {
  const parts = splitNote(checkpoint.note);
  if (parts === null) return { ok: false, reason: "the checkpoint is not a signed note" };
  let answer: Response;
  try {
    answer = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ note: checkpoint.note, public_key: checkpoint.public_key }),
      signal: AbortSignal.timeout(WITNESS_TIMEOUT_MS),
      redirect: "error",
    });
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
  const text = await answer.text();
  if (answer.status !== 200) {
    const code = /"code"\s*:\s*"([a-z_]+)"/.exec(text)?.[1];
    return { ok: false, reason: `it answered ${answer.status}${code ? ` ${code}` : ""}` };
  }
  let parsed: z.infer<typeof WitnessAnswerSchema>;
  try {
    parsed = WitnessAnswerSchema.parse(JSON.parse(text));
  } catch {
    return { ok: false, reason: "its answer is not a cosignature" };
  }
  if (expectedKey !== null && parsed.witness_key !== expectedKey)
    return { ok: false, reason: "it answered with another key than when it was configured" };
  const checked = await verifyCosignature(parts.body, parsed.cosignature, parsed.witness_key);
  if (!checked.ok) return { ok: false, reason: "its cosignature does not verify" };
  return { ok: true, ...parsed, body: parts.body, timeSeconds: checked.timeSeconds };
}

/** Reads the checkpoint the internal route answers. */
export const LatestCheckpointAnswerSchema = z.object({ checkpoint: CheckpointExportSchema.nullable() });
/** The newest sel.cosigned row, as much of it as says which checkpoint it cosigned. */
const CosignedRowsSchema = z.object({ events: z.array(z.object({ detail: z.record(z.string(), z.unknown()) })) });

/**
 * While the gateway runs: every few seconds, a checkpoint newer than the last one shown goes to
 * the configured witness and its cosignature is recorded. Failures are logged and retried.
 */
export function startWitnessPoster(configPath: string, call: CallGateway, log: (line: string) => void) {
  let shownSeq = -1;
  let lastFailure = "";
  const tick = async () => {
    const config = readWitnessConfig(configPath);
    if (config === null) return;
    const latest = LatestCheckpointAnswerSchema.safeParse((await call("GET", "/api/internal/sel/checkpoint")).body);
    if (!latest.success || latest.data.checkpoint === null || latest.data.checkpoint.seq <= shownSeq) return;
    const checkpoint = latest.data.checkpoint;
    if (shownSeq < 0) {
      // After a start: the newest checkpoint already cosigned (by the CLI, or the last run) is not shown again.
      const recorded = CosignedRowsSchema.safeParse(
        (await call("GET", "/api/security/events?kind=sel.cosigned&limit=1")).body,
      );
      const seq = recorded.success ? recorded.data.events[0]?.detail.checkpoint_seq : undefined;
      shownSeq = typeof seq === "number" ? seq : 0;
      if (checkpoint.seq <= shownSeq) return;
    }
    const posted = await postToWitness(config.url, checkpoint, config.witness_key);
    if (!posted.ok) {
      if (posted.reason !== lastFailure) log(`warning sel witness ${config.url}: ${posted.reason}`);
      lastFailure = posted.reason;
      return;
    }
    lastFailure = "";
    const recorded = await call("POST", "/api/internal/sel/cosignature", {
      checkpoint_seq: checkpoint.seq,
      witness: posted.witness,
      body: posted.body,
      cosignature: posted.cosignature,
    });
    if (recorded.status === 200) shownSeq = checkpoint.seq;
  };
  const timer = setInterval(() => {
    tick().catch((error) => log(`sel witness: ${error instanceof Error ? error.message : String(error)}`));
  }, WITNESS_INTERVAL_MS);
  timer.unref();
  return { tick, stop: () => clearInterval(timer) };
}
