import { describe, expect, it } from "vitest";
import { nextFireAfter, nextFires, parseCronSchedule, type CronSchedule } from "./cron-schedule";

const parsed = (expression: string, zone?: string): CronSchedule => {
  const s = parseCronSchedule(expression, zone);
  if (typeof s === "string") throw new Error(s);
  return s;
};
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

describe("cron schedules", () => {
  it("answers the next matching minute strictly after the given time, in UTC", () => {
    const at = Date.UTC(2026, 11, 1, 8, 30, 15);
    expect(iso(nextFireAfter(parsed("0 3 * * *"), at))).toBe("2026-12-02T03:00:00.000Z");
    expect(iso(nextFireAfter(parsed("*/15 * * * *"), at))).toBe("2026-12-01T08:45:00.000Z");
    expect(iso(nextFireAfter(parsed("30 8 * * *"), Date.UTC(2026, 11, 1, 8, 30)))).toBe("2026-12-02T08:30:00.000Z");
    expect(iso(nextFireAfter(parsed("0 9 * * mon-fri"), Date.UTC(2026, 11, 5, 10)))).toBe("2026-12-07T09:00:00.000Z");
    expect(iso(nextFireAfter(parsed("0 0 1 jan *"), at))).toBe("2027-01-01T00:00:00.000Z");
  });

  it("reads a named zone's wall clock, daylight saving included", () => {
    // 09:00 in Paris is 08:00 UTC in winter and 07:00 UTC in summer.
    expect(iso(nextFireAfter(parsed("0 9 * * *", "Europe/Paris"), Date.UTC(2026, 11, 1, 12)))).toBe(
      "2026-12-02T08:00:00.000Z",
    );
    expect(iso(nextFireAfter(parsed("0 9 * * *", "Europe/Paris"), Date.UTC(2026, 6, 1, 12)))).toBe(
      "2026-07-02T07:00:00.000Z",
    );
  });

  it("fires on either day field when both are restricted, as cron does", () => {
    // The 15th, or any Sunday: Sunday 6 December 2026 comes first.
    expect(iso(nextFireAfter(parsed("0 0 15 * 0"), Date.UTC(2026, 11, 1)))).toBe("2026-12-06T00:00:00.000Z");
  });

  it("refuses malformed expressions and unknown zones with a reason", () => {
    for (const bad of [
      "* * * *",
      "60 * * * *",
      "* 24 * * *",
      "*/0 * * * *",
      "5-1 * * * *",
      "a b c d e",
      "* * 32 * *",
    ]) {
      expect(typeof parseCronSchedule(bad), bad).toBe("string");
    }
    expect(parseCronSchedule("* * * * *", "Mars/Olympus")).toMatch(/not a known zone/);
  });

  it("has no next fire for a date that never comes", () => {
    expect(nextFireAfter(parsed("0 0 31 2 *"), Date.UTC(2026, 0, 1))).toBeNull();
    expect(nextFires(parsed("0 0 31 2 *"), Date.UTC(2026, 0, 1), 3)).toEqual([]);
  });

  it("keeps cron's step from a start (5/15) and refuses nicknames and six fields", () => {
    expect(nextFires(parsed("5/20 * * * *"), Date.UTC(2026, 11, 1, 8), 3).map(iso)).toEqual([
      "2026-12-01T08:05:00.000Z",
      "2026-12-01T08:25:00.000Z",
      "2026-12-01T08:45:00.000Z",
    ]);
    for (const bad of ["@daily", "0 30 10 * * *"]) expect(parseCronSchedule(bad), bad).toMatch(/five fields/);
  });
});

/** The next `count` fires after `from` (an ISO time) as ISO times. */
const fires = (expression: string, zone: string, from: string, count: number) =>
  nextFires(parsed(expression, zone), Date.parse(from), count).map(iso);

describe("cron schedules across daylight saving", () => {
  it("New York, spring forward (8 March 2026, 02:00 EST -> 03:00 EDT): a 02:30 job fires once, at 03:00", () => {
    expect(fires("30 2 * * *", "America/New_York", "2026-03-07T00:00:00Z", 3)).toEqual([
      "2026-03-07T07:30:00.000Z",
      "2026-03-08T07:00:00.000Z",
      "2026-03-09T06:30:00.000Z",
    ]);
    // An hourly job fires on the real clock: 01:00 EST, then 03:00 EDT.
    expect(fires("0 * * * *", "America/New_York", "2026-03-08T05:30:00Z", 3)).toEqual([
      "2026-03-08T06:00:00.000Z",
      "2026-03-08T07:00:00.000Z",
      "2026-03-08T08:00:00.000Z",
    ]);
  });

  it("New York, fall back (1 November 2026, 02:00 EDT -> 01:00 EST): a 01:30 job fires once; a half-hourly job fires through both 01:xx hours", () => {
    expect(fires("30 1 * * *", "America/New_York", "2026-10-31T00:00:00Z", 3)).toEqual([
      "2026-10-31T05:30:00.000Z",
      "2026-11-01T05:30:00.000Z",
      "2026-11-02T06:30:00.000Z",
    ]);
    expect(fires("*/30 * * * *", "America/New_York", "2026-11-01T04:50:00Z", 5)).toEqual([
      "2026-11-01T05:00:00.000Z",
      "2026-11-01T05:30:00.000Z",
      "2026-11-01T06:00:00.000Z",
      "2026-11-01T06:30:00.000Z",
      "2026-11-01T07:00:00.000Z",
    ]);
  });

  it("Berlin, both changes (29 March and 25 October 2026): a 02:30 job fires once each day", () => {
    expect(fires("30 2 * * *", "Europe/Berlin", "2026-03-28T00:00:00Z", 3)).toEqual([
      "2026-03-28T01:30:00.000Z",
      "2026-03-29T01:00:00.000Z",
      "2026-03-30T00:30:00.000Z",
    ]);
    expect(fires("30 2 * * *", "Europe/Berlin", "2026-10-24T00:00:00Z", 3)).toEqual([
      "2026-10-24T00:30:00.000Z",
      "2026-10-25T00:30:00.000Z",
      "2026-10-26T01:30:00.000Z",
    ]);
  });

  it("over a whole year, a daily job at any time of night fires exactly once on each local day", () => {
    for (const zone of ["America/New_York", "Europe/Berlin"]) {
      for (const at of ["30 1", "30 2", "0 3"]) {
        const days = nextFires(parsed(`${at} * * *`, zone), Date.parse("2026-01-01T12:00:00Z"), 365).map((ms) =>
          new Intl.DateTimeFormat("en-CA", { timeZone: zone }).format(new Date(ms)),
        );
        expect(new Set(days).size, `${zone} ${at}`).toBe(365);
      }
    }
  });
});
