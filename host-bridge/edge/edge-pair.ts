// `personalclaw edge pair <url>`: makes this machine's Ed25519 key, presents its public half with
// the one-time pairing secret to the edge, and keeps the pairing in <home>/edge.json. The secret
// is read from a prompt or standard input by the caller, never from the command line, and is not
// kept: the edge spends it on this pairing.
import { rmSync } from "node:fs";
import { fetch, type Dispatcher } from "undici";
import { PAIR_PATH, PairAnswerSchema, type PairRequest } from "../../kernel/contracts/bridge-link";
import { readPublicOrigin } from "../../kernel/rules/public-origin";
import { newMachineKey, readEdgeRecord, writeEdgeRecord, type EdgeRecord } from "./edge-record";

export type PairOutcome =
  { ok: true; record: EdgeRecord } | { ok: false; code: string; message: string; status?: number };

/** Pairs the home's machine with the edge at `url`; a home already paired is refused before anything is sent. */
export async function pairWithEdge(input: {
  edgeFile: string;
  /** The anchor of a former edge's log: a new edge's log starts its own. */
  edgeAnchorFile: string;
  url: string;
  /** The deploy's pairing secret (the first machine), or a code the owner created (`code`: each further one). */
  pairingSecret: string;
  code?: boolean;
  dispatcher: Dispatcher | undefined;
}): Promise<PairOutcome> {
  const setting = readPublicOrigin(input.url.replace(/\/$/, ""));
  if (setting.mode !== "edge")
    return {
      ok: false,
      code: "edge_url_invalid",
      message: `The edge's URL must be its bare https:// origin (${setting.mode === "invalid" ? setting.reason : "none given"}).`,
    };
  const existing = readEdgeRecord(input.edgeFile);
  if (existing.found !== "none")
    return {
      ok: false,
      code: "edge_already_paired",
      message:
        existing.found === "record"
          ? `This home is already paired with ${existing.value.origin} as machine ${existing.value.machine}.`
          : `This home's edge.json is unreadable (${existing.reason}); move it away to pair again.`,
    };
  if (input.pairingSecret === "")
    return input.code
      ? { ok: false, code: "edge_pairing_code_refused", message: "No pairing code was given." }
      : { ok: false, code: "edge_pairing_refused", message: "No pairing secret was given." };
  const key = newMachineKey();
  // A code is typed as it is shown (four groups of four); case and spaces are not the owner's concern.
  const request: PairRequest = input.code
    ? { pairing_code: input.pairingSecret.toUpperCase().replace(/\s+/g, ""), public_key: key.publicKeyHex }
    : { pairing_secret: input.pairingSecret, public_key: key.publicKeyHex };
  let status: number;
  let body: unknown;
  try {
    const answer = await fetch(`${setting.public.origin}${PAIR_PATH}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Origin: setting.public.origin },
      body: JSON.stringify(request),
      redirect: "manual",
      dispatcher: input.dispatcher,
      signal: AbortSignal.timeout(30_000),
    });
    status = answer.status;
    body = await answer.json().catch(() => null);
  } catch (error) {
    return { ok: false, code: "edge_unreachable", message: `The edge did not answer: ${String(error)}.` };
  }
  const paired = PairAnswerSchema.safeParse(body);
  if (status !== 201 || !paired.success) {
    const envelope = body as { error?: { code?: unknown; message?: unknown } } | null;
    return {
      ok: false,
      status,
      code: typeof envelope?.error?.code === "string" ? envelope.error.code : "unexpected_answer",
      message: typeof envelope?.error?.message === "string" ? envelope.error.message : `The edge answered ${status}.`,
    };
  }
  const record: EdgeRecord = {
    origin: setting.public.origin,
    machine: paired.data.machine,
    paired_at: paired.data.paired_at,
    private_key: key.privateKeyPem,
  };
  writeEdgeRecord(input.edgeFile, record);
  rmSync(input.edgeAnchorFile, { force: true });
  return { ok: true, record };
}
