// What GET /api/apps/:name/jobs answers of an app's scheduled jobs: AppRegistry builds it and
// the CLI parses it. Imports nothing but zod.
import { z } from "zod";

export const JobRunSchema = z.strictObject({
  scheduledFor: z.string(),
  startedAt: z.string(),
  /**
   * ok: the route answered 2xx; failed: any other answer, a timeout or no backend; skipped: the
   * app was held; running: in flight now; interrupted: the gateway stopped (workerd died) before
   * the answer came, so whether the job finished is not known.
   */
  outcome: z.enum(["ok", "failed", "skipped", "running", "interrupted"]),
  status: z.number().int().nullable(),
  durationMs: z.number(),
  error: z.string().nullable(),
});
export type JobRun = z.infer<typeof JobRunSchema>;

export const JobViewSchema = z.strictObject({
  name: z.string(),
  schedule: z.string(),
  timezone: z.string(),
  route: z.string(),
  timeoutSeconds: z.number().int(),
  /** Null while the app is disabled (a disabled app's jobs never fire). */
  nextFire: z.string().nullable(),
  paused: z.boolean(),
  history: z.array(JobRunSchema),
  /**
   * With `count` in the query: the schedule's next fires after `from` (default now), as its
   * zone's clock reads them across daylight saving — also while the app is disabled, when none
   * of them will fire.
   */
  upcoming: z.array(z.string()).optional(),
});
export type JobView = z.infer<typeof JobViewSchema>;

/** The most upcoming fires one question may ask for, per job. */
export const UPCOMING_FIRES_MAX = 100;

/** GET /api/apps/:name/jobs?from=<ISO time>&count=N: each job's next N fires after `from`. */
export const JobsQuerySchema = z
  .object({
    from: z.iso
      .datetime({ offset: true })
      .meta({ description: "an ISO 8601 time with its offset (2026-03-08T00:00:00Z); default now" })
      .optional(),
    count: z.coerce.number().int().min(1).max(UPCOMING_FIRES_MAX).optional(),
  })
  .strict();

export interface JobFire {
  app: string;
  job: string;
  route: string;
  timeoutMs: number;
  /** When the schedule said it should fire (epoch ms), sent in the body. */
  scheduledFor: number;
}

export interface JobOutcome {
  outcome: "ok" | "failed";
  status: number | null;
  durationMs: number;
  /** The first line of what went wrong: the answer's first line on a non-2xx, or the transport's reason. */
  error: string | null;
}
