// Test helper: the golden vectors in test-vectors.json, typed once for every suite that reads
// them (the worker's signer, the Node and Python verifiers, the end-to-end reach suite).
import { readFileSync } from "node:fs";

/** One request signed with a fixed secret, timestamp and nonce, and the header it must produce. */
export type SigningVector = {
  name: string;
  note?: string;
  secret: string;
  ts: number;
  nonce: string;
  method: string;
  target: string;
  body_base64: string;
  /** The same body split into chunks, for a chunked request. */
  body_chunks_base64?: string[];
  body_sha256: string;
  message: string;
  header: string;
};

/** One request as a verifier receives it at `now`, and whether it must be accepted or refused (and why). */
export type VerifyingVector = {
  name: string;
  now: number;
  secret: string;
  method: string;
  target: string;
  body_base64: string;
  headers: string[];
  expect: "accept" | "refuse";
  reason?: string;
};

/** Requests one verifier answers in order (replays): the vectors' time and secret are shared. */
export type VerifyingSequence = {
  name: string;
  note?: string;
  now: number;
  secret: string;
  requests: Array<Omit<VerifyingVector, "name" | "now" | "secret">>;
};

export type GoldenVectors = {
  format: { window_s: number };
  signing: SigningVector[];
  verifying: VerifyingVector[];
  verifying_sequences: VerifyingSequence[];
};

/** Reads apps/sdk/test-vectors.json (written by generate_test_vectors.py). */
export function loadVectors(): GoldenVectors {
  return JSON.parse(readFileSync(new URL("./test-vectors.json", import.meta.url), "utf8")) as GoldenVectors;
}
