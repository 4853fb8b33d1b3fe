// Cron schedules of app jobs: five fields (minute hour day-of-month month day-of-week), in UTC
// or a named IANA zone. Parsed once when a manifest is validated, so a job the owner consented
// to always has a next fire; shared by the manifest check and AppRegistry's alarm. Imports
// nothing: workerd and Node both have Intl for the zones.

export interface CronSchedule {
  minutes: ReadonlySet<number>;
  hours: ReadonlySet<number>;
  days: ReadonlySet<number>;
  months: ReadonlySet<number>;
  weekdays: ReadonlySet<number>;
  /** Cron's rule: when both day fields are restricted, either one matching is enough. */
  dayOr: boolean;
  zone: string;
}

const FIELDS = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day of month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12 },
  { name: "day of week", min: 0, max: 7 },
] as const;

const MONTH_NAMES = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const DAY_NAMES = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

function parseValue(text: string, field: number): number | null {
  const lower = text.toLowerCase();
  if (field === 3 && MONTH_NAMES.includes(lower)) return MONTH_NAMES.indexOf(lower) + 1;
  if (field === 4 && DAY_NAMES.includes(lower)) return DAY_NAMES.indexOf(lower);
  if (!/^\d{1,2}$/.test(text)) return null;
  const value = Number(text);
  return value >= FIELDS[field]!.min && value <= FIELDS[field]!.max ? value : null;
}

function parseField(text: string, field: number): Set<number> | string {
  const { min, max, name } = FIELDS[field]!;
  const out = new Set<number>();
  for (const part of text.split(",")) {
    const [range, stepText, extra] = part.split("/");
    if (extra !== undefined || range === undefined || range === "") return `the ${name} field '${text}' is not valid`;
    const step =
      stepText === undefined ? 1 : /^\d{1,2}$/.test(stepText) && Number(stepText) > 0 ? Number(stepText) : null;
    if (step === null) return `the ${name} field '${text}' has a step that is not a positive number`;
    let from: number | null;
    let to: number | null;
    if (range === "*") {
      from = min;
      to = max;
    } else if (range.includes("-")) {
      const [a, b] = range.split("-");
      from = parseValue(a ?? "", field);
      to = parseValue(b ?? "", field);
    } else {
      from = parseValue(range, field);
      to = stepText === undefined ? from : max;
    }
    if (from === null || to === null || from > to) return `the ${name} field '${text}' is not valid`;
    for (let v = from; v <= to; v += step) out.add(field === 4 && v === 7 ? 0 : v);
  }
  return out;
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
  const sets: Array<Set<number>> = [];
  for (const [i, part] of parts.entries()) {
    const parsed = parseField(part, i);
    if (typeof parsed === "string") return parsed;
    sets.push(parsed);
  }
  return {
    minutes: sets[0]!,
    hours: sets[1]!,
    days: sets[2]!,
    months: sets[3]!,
    weekdays: sets[4]!,
    dayOr: parts[2] !== "*" && parts[4] !== "*",
    zone,
  };
}

interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  weekday: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function wallClock(ms: number, zone: string): WallClock {
  if (zone === "UTC") {
    const d = new Date(ms);
    return {
      year: d.getUTCFullYear(),
      month: d.getUTCMonth() + 1,
      day: d.getUTCDate(),
      hour: d.getUTCHours(),
      minute: d.getUTCMinutes(),
      weekday: d.getUTCDay(),
    };
  }
  let format = formatters.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      weekday: "short",
    });
    formatters.set(zone, format);
  }
  const parts: Record<string, string> = {};
  for (const part of format.formatToParts(new Date(ms))) parts[part.type] = part.value;
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour) % 24,
    minute: Number(parts.minute),
    weekday: DAY_NAMES.indexOf((parts.weekday ?? "").toLowerCase().slice(0, 3)),
  };
}

function dayMatches(s: CronSchedule, w: WallClock): boolean {
  const dom = s.days.has(w.day);
  const dow = s.weekdays.has(w.weekday);
  return s.dayOr ? dom || dow : dom && dow;
}

const MINUTE = 60_000;
/** A schedule that matches nothing for this long (e.g. 31 February) has no next fire. */
const HORIZON_MS = 5 * 366 * 24 * 60 * MINUTE;

/** The first minute strictly after `afterMs` the schedule matches, in epoch ms; null when none within five years. */
export function nextFireAfter(s: CronSchedule, afterMs: number): number | null {
  let t = Math.floor(afterMs / MINUTE) * MINUTE + MINUTE;
  const end = afterMs + HORIZON_MS;
  while (t <= end) {
    const w = wallClock(t, s.zone);
    // Skip whole hours and days that cannot match: wall-clock minutes are the slow path.
    // In a named zone a day may be 23 or 25 hours long, so only whole hours are skipped there.
    if (!s.months.has(w.month) || !dayMatches(s, w)) {
      t += (s.zone === "UTC" ? 24 * 60 - (w.hour * 60 + w.minute) : 60 - w.minute) * MINUTE;
      continue;
    }
    if (!s.hours.has(w.hour)) {
      t += (60 - w.minute) * MINUTE;
      continue;
    }
    if (s.minutes.has(w.minute)) return t;
    t += MINUTE;
  }
  return null;
}
