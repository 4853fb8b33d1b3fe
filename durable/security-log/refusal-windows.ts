// Refusals are counted, not copied (issue 12): one refused request per row let anyone local
// write ~280 rows/s and push real history past retention. The rule, in one place: identical
// refusals — same kind, principal and group (a route pattern or family and reason, never a
// raw path; the subject when a caller names no group) — within a window are one row. The
// first is written at once, as it always was; the repeats are counted and written as one
// `sel.refusals_counted` row carrying the count and the first and last time. A key that keeps
// being refused gets a window twice as long each time (5 min up to 1 h), so a flood that never
// stops costs about 30 rows a day per key, not one per request; one kind and principal has at
// most 8 groups of its own, the rest share one, so a caller-chosen part of a group (a foreign
// Host) cannot defeat it either.
//
// A count is never lost: every change of a window is stored (refusal_windows) before the
// request is answered. Counts become rows when a window ends (the alarm, or the next call
// after it); before any other kind of event, so rows stay in time order; before a read, a
// verify or a rotation, so the owner sees every count; and at the next start for what a
// stopped gateway left (the CLI's `gateway_stopped` row is another event, so a clean stop
// writes them at once). Windows stay open through all of these except a start. A crash
// between writing a count row and clearing its window can write that count twice; it can
// never drop it.
//
// Allowed events a process causes at will, one per action, are counted by the same rule
// (issue 33 item 6): an app's every egress connection wrote its own `egress_allowed` row,
// ~170 rows/s from one app. Their repeats become `sel.allowed_counted` rows (outcome allowed).
// An agent's tool calls through `mcp run` are counted so too (issue 39): the first call of a
// tool with an outcome is its own row, its repeats in the window one count.
import type { JsonObject } from "../../kernel/crypto/canonical-json";
import type { SqlPort } from "./log-core";

/** Kind of the row that carries the counted repeats of a refusal; written only by the log. */
export const REFUSALS_COUNTED_KIND = "sel.refusals_counted";
/** Kind of the row that carries the counted repeats of an allowed event; written only by the log. */
export const ALLOWED_COUNTED_KIND = "sel.allowed_counted";

/** Allowed kinds counted like refusals: each is one per action a process takes at its will. */
export const COUNTED_ALLOWED_KINDS: ReadonlySet<string> = new Set(["egress_allowed", "mcp_tool_called"]);

/**
 * Whether an event is counted in a window rather than always written as its own row. A tool
 * call whose argument values the owner chose to keep (`mcp log-arguments`) is its own row
 * whatever its outcome: a count would drop the values the owner asked for, and only the owner's
 * switch (never the app) puts them there.
 */
export function isCounted(event: { kind: string; outcome: string; detail?: JsonObject }): boolean {
  if (event.kind === "mcp_tool_called" && event.detail?.arguments !== undefined) return false;
  return event.outcome === "refused" || (event.outcome === "allowed" && COUNTED_ALLOWED_KINDS.has(event.kind));
}

export const FIRST_WINDOW_MS = 5 * 60_000;
export const LONGEST_WINDOW_MS = 60 * 60_000;
/** More open windows than this and a new key shares its kind and principal's overflow window. */
export const MAX_OPEN_WINDOWS = 1000;
/** More distinct groups than this for one kind and principal and a new one shares the overflow window. */
export const MAX_GROUPS_PER_SOURCE = 8;
/** How many distinct subjects a count row names as examples. */
export const SAMPLE_SUBJECTS = 5;

export const OVERFLOW_GROUP = "(too many groups)";

/** Principals whose refusals are always written one row each. */
const UNCOUNTED_PRINCIPALS = new Set(["owner", "cli"]);

/** A refusal (or a counted allowed event) after redaction: what the window keys on and what a count row quotes. */
export interface RefusalEvent {
  kind: string;
  /** Absent: refused. */
  outcome?: "allowed" | "refused";
  principal: string;
  subject: string;
  detail: JsonObject;
  group: string;
}

interface WindowState {
  kind: string;
  /** Absent (a window stored before allowed events were counted): refused. */
  outcome?: "allowed" | "refused";
  principal: string;
  group: string;
  openedMs: number;
  windowMs: number;
  count: number;
  firstTs: string | null;
  lastTs: string | null;
  subjects: string[];
  firstDetail: JsonObject | null;
}

/** The row a count becomes (the log chains it like any other). */
export interface CountedRow {
  kind: typeof REFUSALS_COUNTED_KIND | typeof ALLOWED_COUNTED_KIND;
  principal: string;
  outcome: "refused" | "allowed";
  subject: string;
  detail: JsonObject;
}

export type Observation = { write: "now" } | { write: "counted" };

export const REFUSAL_WINDOWS_SCHEMA = `CREATE TABLE IF NOT EXISTS refusal_windows (
  key TEXT PRIMARY KEY,
  state TEXT NOT NULL
)`;

function keyOf(kind: string, principal: string, group: string): string {
  return JSON.stringify([kind, principal, group]);
}

/** The open windows of one log, mirrored in its `refusal_windows` table. */
export class RefusalWindows {
  private readonly windows = new Map<string, WindowState>();

  constructor(private readonly sql: SqlPort) {
    sql.exec(REFUSAL_WINDOWS_SCHEMA);
    for (const row of sql.exec<{ key: string; state: string }>("SELECT key, state FROM refusal_windows").toArray()) {
      try {
        this.windows.set(row.key, JSON.parse(row.state) as WindowState);
      } catch {
        sql.exec("DELETE FROM refusal_windows WHERE key = ?", row.key);
      }
    }
  }

  /**
   * Decides whether a refusal is written now (its key has no open window: one opens) or
   * counted in its open window. Call after writing what `due(nowMs)` answers, so an ended
   * window is never counted into.
   */
  observe(event: RefusalEvent, nowMs: number, ts: string): Observation {
    // The owner's own refused actions are each evidence of what the owner did, and only a
    // holder of the owner's credential can cause them: never counted away.
    if (UNCOUNTED_PRINCIPALS.has(event.principal)) return { write: "now" };
    let key = keyOf(event.kind, event.principal, event.group);
    let group = event.group;
    if (
      !this.windows.has(key) &&
      (this.windows.size >= MAX_OPEN_WINDOWS || this.groupsOf(event.kind, event.principal) >= MAX_GROUPS_PER_SOURCE)
    ) {
      group = OVERFLOW_GROUP;
      key = keyOf(event.kind, event.principal, group);
    }
    const state = this.windows.get(key);
    if (state === undefined) {
      this.store(key, {
        kind: event.kind,
        ...(event.outcome === "allowed" ? { outcome: "allowed" as const } : {}),
        principal: event.principal,
        group,
        openedMs: nowMs,
        windowMs: FIRST_WINDOW_MS,
        count: 0,
        firstTs: null,
        lastTs: null,
        subjects: [],
        firstDetail: null,
      });
      return { write: "now" };
    }
    state.count += 1;
    state.firstTs ??= ts;
    state.lastTs = ts;
    state.firstDetail ??= event.detail;
    if (state.subjects.length < SAMPLE_SUBJECTS && !state.subjects.includes(event.subject))
      state.subjects.push(event.subject);
    this.store(key, state);
    return { write: "counted" };
  }

  /**
   * Closes the windows that ended by nowMs (all of them with `all`), answering the count rows
   * to write. A window that counted something reopens empty and twice as long (the key is
   * still hot); an empty ended window is forgotten. Call `settle` once the rows are written.
   */
  due(nowMs: number, all = false): Array<{ key: string; row: CountedRow }> {
    const out: Array<{ key: string; row: CountedRow }> = [];
    for (const [key, state] of this.windows) {
      const ended = nowMs >= state.openedMs + state.windowMs;
      if (state.count > 0 && (ended || all)) out.push({ key, row: this.rowOf(state) });
    }
    return out;
  }

  /** Clears the counts just written and rolls ended windows forward (see `due`). */
  settle(written: ReadonlyArray<{ key: string }>, nowMs: number): void {
    const writtenKeys = new Set(written.map((entry) => entry.key));
    for (const [key, state] of [...this.windows]) {
      const ended = nowMs >= state.openedMs + state.windowMs;
      if (writtenKeys.has(key)) {
        const next: WindowState = { ...state, count: 0, firstTs: null, lastTs: null, subjects: [], firstDetail: null };
        if (ended) {
          next.openedMs = nowMs;
          next.windowMs = Math.min(state.windowMs * 2, LONGEST_WINDOW_MS);
        }
        this.store(key, next);
      } else if (ended && state.count === 0) {
        this.windows.delete(key);
        this.sql.exec("DELETE FROM refusal_windows WHERE key = ?", key);
      }
    }
  }

  /** Forgets every window (once their counts are written). */
  clear(): void {
    this.windows.clear();
    this.sql.exec("DELETE FROM refusal_windows");
  }

  /** When the earliest open window ends, or null when none is open. */
  nextEndMs(): number | null {
    let next: number | null = null;
    for (const state of this.windows.values()) {
      const end = state.openedMs + state.windowMs;
      if (next === null || end < next) next = end;
    }
    return next;
  }

  private groupsOf(kind: string, principal: string): number {
    let n = 0;
    for (const state of this.windows.values())
      if (state.kind === kind && state.principal === principal && state.group !== OVERFLOW_GROUP) n += 1;
    return n;
  }

  private store(key: string, state: WindowState): void {
    this.windows.set(key, state);
    this.sql.exec(
      "INSERT INTO refusal_windows (key, state) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET state = excluded.state",
      key,
      JSON.stringify(state),
    );
  }

  private rowOf(state: WindowState): CountedRow {
    const allowed = state.outcome === "allowed";
    return {
      kind: allowed ? ALLOWED_COUNTED_KIND : REFUSALS_COUNTED_KIND,
      principal: state.principal,
      outcome: allowed ? "allowed" : "refused",
      subject: `${state.count} × ${state.kind}`,
      detail: {
        kind: state.kind,
        group: state.group,
        count: state.count,
        first_ts: state.firstTs,
        last_ts: state.lastTs,
        window_ms: state.windowMs,
        subjects: state.subjects,
        first_detail: state.firstDetail ?? {},
      },
    };
  }
}
