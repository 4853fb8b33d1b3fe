// `personalclaw security events|verify|acknowledge|checkpoint|seed|witness|admit`.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { CheckpointExportSchema, WitnessAdmittedSchema } from "../../kernel/contracts/security-event";
import { CHECKPOINT_KIND, openCheckpoint, splitNote, verifyCosignature } from "../../kernel/chain/checkpoint";
import { cosignatureFromRow, provesCheckpoint } from "../../kernel/chain/extends-checkpoint";
import {
  keysFromFirstEpochKey,
  keysFromSeed,
  seedFromVerificationCode,
  verificationCode,
} from "../../kernel/chain/epoch-key";
import { verifyChain } from "../../kernel/chain/verify-chain";
import { homePaths } from "../home";
import { readAnchor } from "../sel-anchor";
import { readStoredRows, securityLogFile } from "../sel-offline";
import { sealedSeedPath, unsealSeed } from "../sel-seed";
import { postToWitness, readWitnessConfig, writeWitnessConfig } from "../sel-witness";
import { asOwnerSession, callGateway, parseAnswer, type GatewayAnswer } from "./gateway-client";
import { parseStrictJson } from "../../kernel/text/strict-json";
import type { Settings } from "../settings";
import { safeLine } from "../../kernel/text/text-safety";
import { printRefusal } from "./print";
import { httpUrlValue } from "./flag-values";
import { UsageError } from "./usage-error";
import { clearUnacknowledgedAnchor, readUnacknowledgedAnchor } from "../sel-anchor";

export interface EventsFilter {
  kind?: string;
  principal?: string;
  subject?: string;
  outcome?: string;
  since?: string;
  limit?: number;
  json?: boolean;
}

export async function runSecurityEvents(home: string, values: EventsFilter): Promise<number> {
  const query = new URLSearchParams();
  for (const key of ["kind", "principal", "subject", "outcome", "since"] as const)
    if (values[key]) query.set(key, values[key]);
  if (values.limit !== undefined) query.set("limit", String(values.limit));
  const answer = await callGateway(
    home,
    "security-events",
    "GET",
    `/api/security/events${query.size ? `?${query}` : ""}`,
  );
  if (answer.status !== 200) return printRefusal(answer, Boolean(values.json));
  if (values.json) {
    process.stdout.write(`${JSON.stringify(answer.body)}\n`);
    return 0;
  }
  if (answer.body.events.length === 0)
    process.stdout.write(
      [...query.keys()].some((key) => key !== "limit")
        ? "No security events match these filters.\n"
        : "No security events yet.\n",
    );
  for (const event of answer.body.events) {
    // Stored subjects are already one escaped line; escaping again is harmless and keeps a row from an older log safe.
    process.stdout.write(
      `${event.seq}\t${event.ts}\t${event.kind}\t${event.principal}\t${event.outcome}\t${safeLine(event.subject)}\n`,
    );
  }
  return 0;
}

export interface VerifyOptions {
  checkpoint?: string;
  "public-key"?: string;
  seed?: string;
  "epoch0-key"?: string;
  /** Verify the paired edge's log, with the anchor this machine keeps of it (start --edge). */
  edge?: boolean;
  json?: boolean;
}

/** The verification of the paired edge's log by its gateway, asked over a short link of this machine's own. */
async function askEdgeToVerify(home: string, settings: Settings, json: boolean) {
  const { callEdgeOnce } = await import("../edge/edge-token");
  const answer = await callEdgeOnce(home, settings, json, {
    work: "cli:security-verify",
    method: "GET",
    path: "/api/security/events/verify",
  });
  if ("failed" in answer) return answer;
  const body = parseStrictJson(answer.body);
  return { status: answer.status, body: body.ok ? (body.value as GatewayAnswer["body"]) : null };
}

export async function runSecurityVerify(home: string, values: VerifyOptions, settings: Settings): Promise<number> {
  if (values.checkpoint || values.seed || values["epoch0-key"]) return runOfflineVerify(home, values);
  const answer = values.edge
    ? await askEdgeToVerify(home, settings, Boolean(values.json))
    : await callGateway(home, "security-verify", "GET", "/api/security/events/verify");
  if ("failed" in answer) return answer.failed;
  if (answer.status !== 200) return printRefusal(answer, Boolean(values.json));
  const result = answer.body;
  if (values.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else if (result.ok)
    process.stdout.write(
      `The security log verifies: ${result.checked} rows in ${result.segments} segments${result.macs_unchecked ? ` (${result.macs_unchecked} rows of erased epochs checked for their links only: pass --seed to recompute their macs)` : ""}.\n`,
    );
  else
    process.stdout.write(
      `The security log does NOT verify: first bad row ${result.first_bad_seq} (${result.reason}); ${result.checked} rows checked.\n`,
    );
  return result.ok ? 0 : 1;
}

/**
 * `personalclaw security acknowledge`: the owner says they know the anchor was lost. The row is
 * written first (so the acknowledgement is itself evidence), then doctor stops failing.
 */
export async function runSecurityAcknowledge(home: string, values: { json?: boolean }): Promise<number> {
  const lost = readUnacknowledgedAnchor(home);
  if (lost === null) {
    process.stdout.write(
      values.json
        ? `${JSON.stringify({ acknowledged: false })}\n`
        : "Nothing to acknowledge: the security-log anchor has not been lost.\n",
    );
    return 0;
  }
  const answer = await callGateway(home, "security-acknowledge", "POST", "/api/internal/sel/append", {
    kind: "sel_anchor_loss_acknowledged",
    principal: "cli",
    outcome: "info",
    subject: "",
    detail: { since: lost.since, reason: lost.reason },
  });
  if (answer.status !== 200) return printRefusal(answer, Boolean(values.json));
  clearUnacknowledgedAnchor(home);
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ acknowledged: true, since: lost.since, reason: lost.reason })}\n`);
    return 0;
  }
  process.stdout.write(
    `Acknowledged: the security-log anchor was ${lost.reason} at ${lost.since}; truncation before then cannot be detected. The anchor now follows the log again.\n`,
  );
  return 0;
}

/** `personalclaw security checkpoint --out FILE`: the newest signed checkpoint to FILE, its public key to FILE.pub. */
export async function runSecurityCheckpoint(home: string, values: { out?: string; json?: boolean }): Promise<number> {
  const answer = await callGateway(home, "security-checkpoint", "POST", "/api/security/checkpoint");
  if (answer.status !== 200) return printRefusal(answer, Boolean(values.json));
  const checkpoint = CheckpointExportSchema.parse(answer.body);
  if (values.out) {
    writeFileSync(values.out, checkpoint.note);
    writeFileSync(`${values.out}.pub`, `${checkpoint.public_key}\n`);
  }
  if (values.json) process.stdout.write(`${JSON.stringify(checkpoint)}\n`);
  else if (values.out)
    process.stdout.write(
      `Checkpoint of ${checkpoint.origin} at seq ${checkpoint.seq} written to ${values.out}; its public key to ${values.out}.pub. Keep a copy off this machine.\n`,
    );
  else process.stdout.write(`${checkpoint.note}\n${checkpoint.public_key}\n`);
  return 0;
}

/**
 * `personalclaw security verify --checkpoint FILE [--public-key FILE|KEY] [--seed CODE]`:
 * offline, from the SQLite file: the checkpoint's signature with the public key alone, then
 * whether the stored rows still extend it; with the seed, every row's mac too. Also reports
 * which of the log's checkpoints the configured witness cosigned.
 */
async function runOfflineVerify(home: string, values: VerifyOptions): Promise<number> {
  const paths = homePaths(home);
  const say = (result: Record<string, unknown>, text: string, ok: boolean) => {
    process.stdout.write(values.json ? `${JSON.stringify(result)}\n` : `${text}\n`);
    return ok ? 0 : 1;
  };
  const file = securityLogFile(paths.state);
  if (file === null)
    return say({ ok: false, reason: "no_log" }, `There is no security log under ${paths.state}.`, false);
  const { rows, removals } = readStoredRows(file);
  const result: Record<string, unknown> = { ok: true };
  const lines: string[] = [];

  if (values.checkpoint) {
    const note = readFileSync(values.checkpoint, "utf8");
    const keyArg = values["public-key"] ?? `${values.checkpoint}.pub`;
    const vkey = existsSync(keyArg) ? readFileSync(keyArg, "utf8").trim() : keyArg;
    const opened = await openCheckpoint(note, vkey);
    if (!opened.ok)
      return say(
        { ok: false, reason: "checkpoint_signature_invalid", detail: opened.reason },
        `The checkpoint does not verify with that public key: ${opened.reason}.`,
        false,
      );
    const proof = await provesCheckpoint(rows, opened.checkpoint);
    result.checkpoint = {
      origin: opened.checkpoint.origin,
      seq: opened.checkpoint.seq,
      time: opened.checkpoint.time,
      ...proof,
    };
    if (proof.standing !== "extends") result.ok = false;
    lines.push(
      proof.standing === "extends"
        ? `The log extends the checkpoint of ${opened.checkpoint.time} (seq ${opened.checkpoint.seq}): its ${proof.checked} rows hash to the signed root and link on.`
        : `The log does NOT extend the checkpoint of ${opened.checkpoint.time} (seq ${opened.checkpoint.seq}): ${proof.standing}${proof.first_bad_seq ? ` at row ${proof.first_bad_seq}` : ""}.`,
    );
  }

  if (values.seed || values["epoch0-key"]) {
    // --epoch0-key: a log started before epochs, whose sel_hmac.key is the key of epoch 0.
    const seed = values.seed ? seedFromVerificationCode(values.seed) : null;
    const firstKey = values["epoch0-key"] ? readFileSync(values["epoch0-key"]).toString("hex") : null;
    if (seed === null && (firstKey === null || firstKey.length !== 64))
      return say(
        { ok: false, reason: "seed_invalid" },
        "The seed is not a verification code (64 hexadecimal characters), nor the key file 32 bytes.",
        false,
      );
    const keys = seed !== null ? await keysFromSeed(seed) : keysFromFirstEpochKey(firstKey!);
    const full = await verifyChain(keys, rows, { removalRows: removals, anchor: readAnchor(paths.selAnchor) });
    result.chain = full;
    if (!full.ok) result.ok = false;
    lines.push(
      full.ok
        ? `Every row's mac recomputes from the seed: ${full.checked} rows in ${full.segments} segments.`
        : `The chain does NOT verify from the seed: first bad row ${full.first_bad_seq} (${full.reason}).`,
    );
  }

  const witness = readWitnessConfig(paths.selWitness);
  const checkpoints = new Map<number, string>();
  for (const row of rows)
    if (row.kind === CHECKPOINT_KIND && typeof row.detail.seq === "number" && typeof row.detail.note === "string")
      checkpoints.set(row.detail.seq, splitNote(row.detail.note)?.body ?? "");
  const witnessed: Array<{ seq: number; witness: string; time: string }> = [];
  for (const row of rows) {
    const recorded = cosignatureFromRow(row);
    if (recorded === null || witness === null || checkpoints.get(recorded.checkpoint_seq) !== recorded.body) continue;
    const checked = await verifyCosignature(recorded.body, recorded.cosignature, witness.witness_key);
    if (checked.ok)
      witnessed.push({
        seq: recorded.checkpoint_seq,
        witness: recorded.witness,
        time: new Date(checked.timeSeconds * 1000).toISOString(),
      });
  }
  result.checkpoints = checkpoints.size;
  result.witnessed = witnessed;
  lines.push(
    witness === null
      ? `${checkpoints.size} checkpoints in the log; no witness is configured.`
      : `${checkpoints.size} checkpoints in the log; ${witnessed.length} cosigned by ${witness.witness}${witnessed.length ? ` (seqs ${witnessed.map((w) => w.seq).join(", ")})` : ""}.`,
  );
  return say(result, lines.join("\n"), result.ok === true);
}

/** `personalclaw security seed --show`: the verification code, unsealed with the owner's passphrase. */
export async function runSecuritySeed(
  home: string,
  passphrase: string,
  values: { show?: boolean; json?: boolean },
): Promise<number> {
  if (!values.show)
    throw new UsageError("'security seed' shows the seed only when asked with --show", ["security", "seed"]);
  if (passphrase === "") {
    process.stderr.write(
      "personalclaw: the seed is sealed to your passphrase: set PERSONALCLAW_SEL_SEED_PASSPHRASE to show it.\n",
    );
    return 1;
  }
  const opened = unsealSeed(home, passphrase);
  if (!opened.ok) {
    const why = {
      not_kept: "this home keeps no sealed seed: it was shown once at the first start (no passphrase was set then)",
      unreadable: `${sealedSeedPath(home)} cannot be read`,
      wrong_passphrase: "the passphrase does not open the sealed seed",
    }[opened.reason];
    process.stderr.write(`personalclaw: ${why}.\n`);
    return 1;
  }
  // The showing is itself evidence, when the gateway runs to record it.
  await callGateway(home, "security-seed", "POST", "/api/internal/sel/append", {
    kind: "sel_seed_shown",
    principal: "cli",
    outcome: "info",
    subject: "",
  }).catch(() => undefined);
  const code = verificationCode(opened.seedHex);
  process.stdout.write(values.json ? `${JSON.stringify({ verification_code: code })}\n` : `${code}\n`);
  return 0;
}

/** `personalclaw security witness <url>`: shows the newest checkpoint to the witness, keeps its key, records its cosignature. */
export async function runSecurityWitness(home: string, url: string, values: { json?: boolean }): Promise<number> {
  if (!httpUrlValue(url).ok)
    throw new UsageError(`'security witness' needs the http(s) address of the witness, not '${url}'`, [
      "security",
      "witness",
    ]);
  const answer = await callGateway(home, "security-witness", "POST", "/api/security/checkpoint");
  if (answer.status !== 200) return printRefusal(answer, Boolean(values.json));
  const checkpoint = CheckpointExportSchema.parse(answer.body);
  const posted = await postToWitness(url, checkpoint, null);
  if (!posted.ok) {
    process.stderr.write(`personalclaw: the witness at ${url} did not cosign: ${posted.reason}.\n`);
    return 1;
  }
  writeWitnessConfig(homePaths(home).selWitness, {
    url,
    witness_key: posted.witness_key,
    witness: posted.witness,
    since: new Date().toISOString(),
  });
  const recorded = await callGateway(home, "security-witness", "POST", "/api/internal/sel/cosignature", {
    checkpoint_seq: checkpoint.seq,
    witness: posted.witness,
    body: posted.body,
    cosignature: posted.cosignature,
  });
  if (recorded.status !== 200) return printRefusal(recorded, Boolean(values.json));
  if (values.json)
    process.stdout.write(
      `${JSON.stringify({ witness: posted.witness, witness_key: posted.witness_key, seq: checkpoint.seq })}\n`,
    );
  else
    process.stdout.write(
      `${posted.witness} cosigned checkpoint ${checkpoint.seq}; every new checkpoint goes to ${url} while the gateway runs.\n`,
    );
  return 0;
}

/**
 * `personalclaw security admit <KEY|FILE>`: as a witness, admits the log whose checkpoints that
 * verifier key signs (its owner reads it from `security checkpoint --json`, or FILE.pub), so
 * `security witness` from that log is cosigned here. The gateway takes the admission only from
 * an owner session (never the internal credential), so the CLI makes one with the local secret.
 */
export async function runSecurityAdmit(home: string, key: string, values: { json?: boolean }): Promise<number> {
  const publicKey = existsSync(key) ? readFileSync(key, "utf8").trim() : key.trim();
  const answer = await asOwnerSession(home, "security-admit", (call) =>
    call("POST", "/api/security/witness/admitted", { public_key: publicKey }),
  );
  const parsed = parseAnswer(answer, WitnessAdmittedSchema);
  if (!parsed.ok) return printRefusal(parsed.answer, Boolean(values.json));
  const admitted = parsed.body;
  process.stdout.write(
    values.json
      ? `${JSON.stringify(admitted)}\n`
      : `Admitted the log ${safeLine(admitted.origin)}: this gateway now cosigns its checkpoints (${admitted.admitted_logs} of at most 100 logs admitted).\n`,
  );
  return 0;
}
