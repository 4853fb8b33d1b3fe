// Cron schedules of app jobs: five fields (minute hour day-of-month month day-of-week), in UTC
// or a named IANA zone. Parsed once when a manifest is validated, so a job the owner consented
// to always has a next fire; shared by the manifest check and AppRegistry's alarm.
//
// The reading and the walk are croner's (a dependency-free schedule library both runtimes run:
// workerd and Node have Intl for the zones), because a zone's wall clock is not a line of
// minutes: across daylight saving a hand-written minute walk skipped a daily 02:30 job on the
// spring-forward day and fired a 01:30 job twice on the fall-back day. croner follows what cron
// does there: a job at a fixed time of day that falls in the hour the clocks skip fires once,
// at the first minute after the jump; one at a fixed time in the hour that repeats fires once,
// at its first occurrence; a job that fires every so many minutes or hours keeps firing on the
// real clock through both.
import { Cron } from "croner";

export interface CronSchedule {
  cron: Cron;
  zone: string;
}

/** True when `zone` is UTC or an IANA zone name this runtime knows. */
export function isKnownZone(zone: string): boolean {
  if (zone === "UTC") return true;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** Parses a five-field cron expression; a string saying what is wrong otherwise. */
export function parseCronSchedule(expression: string, zone = "UTC"): CronSchedule | string {
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== 5) return "a schedule has five fields: minute hour day-of-month month day-of-week";
  if (!isKnownZone(zone)) return `the time zone '${zone}' is not a known zone name`;
  try {
    // `5/15` reads as cron reads it (from 5, every 15); a pattern never starts anything by itself.
    const cron = new Cron(parts.join(" "), { timezone: zone, mode: "5-part", sloppyRanges: true, paused: true });
    return { cron, zone };
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).replace(/^Cron\w*: /, "");
    return `the schedule '${expression.trim().slice(0, 100)}' is not valid: ${reason.slice(0, 200)}`;
  }
}

/** The first minute strictly after `afterMs` the schedule fires, in epoch ms; null when it never does. */
export function nextFireAfter(s: CronSchedule, afterMs: number): number | null {
  return s.cron.nextRun(new Date(afterMs))?.getTime() ?? null;
}

/** The next `count` fires strictly after `afterMs`, in order (fewer when the schedule runs out). */
export function nextFires(s: CronSchedule, afterMs: number, count: number): number[] {
  const out: number[] = [];
  let at: number | null = afterMs;
  while (out.length < count && (at = nextFireAfter(s, at)) !== null) out.push(at);
  return out;
}

/** A job's next `count` fires after `fromMs` as ISO times; none for a schedule that does not parse. */
export function upcomingFires(job: { schedule: string; timezone: string }, fromMs: number, count: number): string[] {
  const schedule = parseCronSchedule(job.schedule, job.timezone);
  if (typeof schedule === "string") return [];
  return nextFires(schedule, fromMs, count).map((ms) => new Date(ms).toISOString());
}
