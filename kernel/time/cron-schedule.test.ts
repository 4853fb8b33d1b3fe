import { describe, expect, it } from "vitest";
import { nextFireAfter, parseCronSchedule, type CronSchedule } from "./cron-schedule";

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
  });
});
