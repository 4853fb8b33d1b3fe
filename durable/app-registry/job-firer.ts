// How a due job is fired is the worker's to say (it signs and sends the request the way its
// proxy does); this object only decides when. The worker's entry hands its firer in when the
// script loads, before any alarm can run, so this layer never imports the worker.
import type { Env } from "../env";
import type { ProxyTarget } from "../../kernel/contracts/app-record";
import type { JobFire, JobOutcome } from "../../kernel/contracts/scheduled-jobs";

export type JobFirer = (env: Env, target: ProxyTarget, fire: JobFire) => Promise<JobOutcome>;

let firer: JobFirer | null = null;

/** Called once by the worker's entry module. */
export function provideJobFirer(fire: JobFirer): void {
  firer = fire;
}

/** The firer the entry handed in; a script that never handed one in cannot fire jobs (a failed run, not a crash). */
export function jobFirer(): JobFirer {
  return (
    firer ??
    (async () => ({
      outcome: "failed",
      status: null,
      durationMs: 0,
      error: "no job firer was provided to AppRegistry",
    }))
  );
}
