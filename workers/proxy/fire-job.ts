// One fire of an app's scheduled job: a POST to the job's route on the app's backend, signed
// exactly like a proxied request (proxy-signature.ts) so the backend's verifier runs it, with
// X-PersonalClaw-Job naming the job. Reached the way the proxy reaches the backend (its socket
// slot when confined). Expected failures are results: the caller keeps each one in the history.
import { addAppCredentials } from "./signed-send";
import type { ProxyTarget } from "../../kernel/contracts/app-record";
import type { JobFire, JobOutcome } from "../../kernel/contracts/scheduled-jobs";
import type { Env } from "../../durable/env";
import { sessions } from "../sessions";
import { backendTransport } from "./forward";

/** The header that tells a backend a request is a scheduled job's fire, and which job. */
export const JOB_HEADER = "X-PersonalClaw-Job";

function firstLine(text: string): string | null {
  const line = text.split(/\r?\n/).find((l) => l.trim() !== "");
  return line === undefined ? null : line.trim().slice(0, 300);
}

/** Fires one job now. The signature and token use the real clock: the backend checks the signature's time against its own. */
export async function fireJob(env: Env, target: ProxyTarget, fire: JobFire): Promise<JobOutcome> {
  const started = Date.now();
  const done = (outcome: JobOutcome["outcome"], status: number | null, error: string | null): JobOutcome => ({
    outcome,
    status,
    durationMs: Date.now() - started,
    error,
  });
  const transport = backendTransport(env, fire.app, target);
  if (!target.healthy || transport === null || !target.secret)
    return done("failed", null, "the app's backend is not running and healthy");
  const url = new URL(`${transport.origin}${fire.route}`);
  const body = new TextEncoder().encode(
    JSON.stringify({ job: fire.job, scheduledFor: new Date(fire.scheduledFor).toISOString() }),
  );
  const token = await sessions(env).appToken(fire.app, target.tokenEpoch, started);
  const headers = new Headers({ "Content-Type": "application/json", [JOB_HEADER]: fire.job });
  await addAppCredentials(headers, { app: fire.app, secret: target.secret, token }, "POST", url, body, started);
  const aborter = new AbortController();
  const timer = setTimeout(() => aborter.abort(), fire.timeoutMs);
  try {
    const answer = await transport.fetch(url, {
      method: "POST",
      headers,
      body,
      redirect: "manual",
      signal: aborter.signal,
    });
    const text = (await answer.text()).slice(0, 4096);
    if (answer.status >= 200 && answer.status < 300) return done("ok", answer.status, null);
    return done("failed", answer.status, firstLine(text) ?? `the backend answered ${answer.status}`);
  } catch (error) {
    if (aborter.signal.aborted) return done("failed", null, `no answer within ${Math.round(fire.timeoutMs / 1000)} s`);
    return done(
      "failed",
      null,
      firstLine(error instanceof Error ? error.message : String(error)) ?? "the request failed",
    );
  } finally {
    clearTimeout(timer);
  }
}
