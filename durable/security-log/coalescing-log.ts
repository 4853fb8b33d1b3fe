// The security log as callers reach it: the chained core with refusals counted, not copied
// (refusal-windows.ts holds the rule). The one chokepoint every row passes — the worker's
// audit step and the bridge's internal append alike — so no caller keeps a dedupe of its own.
import { GatewayError } from "../../kernel/contracts/errors";
import { storageFullReason } from "../../kernel/contracts/storage-full";
import type {
  AppendResult,
  RotateResult,
  RetentionResult,
  SecurityEventPage,
  VerifyResult,
} from "../../kernel/contracts/security-event";
import { MAX_APPEND_BATCH, SecurityLogCore, type PreparedEvent, type SqlPort } from "./log-core";
import { isCounted, RefusalWindows } from "./refusal-windows";

export interface CoalescingOptions {
  /** Clock in epoch ms; the same one the core runs on. */
  now?: () => number;
  /** Asked to run `flushDue` at this time (the Durable Object's alarm); tests leave it out. */
  scheduleAt?: (ms: number) => void;
}

/** Appends with refusals coalesced; reads, verification and rotation see every count first. */
export class CoalescingLog {
  private queue: Promise<unknown> = Promise.resolve();
  private scheduledFor: number | null = null;

  private constructor(
    readonly core: SecurityLogCore,
    private readonly windows: RefusalWindows,
    private readonly now: () => number,
    private readonly scheduleAt: ((ms: number) => void) | undefined,
  ) {}

  /** Opens over an opened core; counts a previous run left behind are written first. */
  static async open(core: SecurityLogCore, sql: SqlPort, options: CoalescingOptions = {}): Promise<CoalescingLog> {
    const log = new CoalescingLog(core, new RefusalWindows(sql), options.now ?? Date.now, options.scheduleAt);
    await log.writeCounts("close");
    return log;
  }

  /** Appends one event; an identical refusal within its window is counted instead of copied. */
  async append(input: unknown): Promise<AppendResult> {
    const prepared = this.core.prepareWithGroup(input);
    return this.serialize(() => this.appendOne(prepared));
  }

  /** Appends events in order, all validated before any is written. */
  async appendMany(inputs: unknown): Promise<AppendResult[]> {
    if (!Array.isArray(inputs))
      throw new GatewayError("sel_event_invalid", { vars: { reason: "appendMany takes an array" } });
    if (inputs.length > MAX_APPEND_BATCH) {
      throw new GatewayError("sel_event_invalid", { vars: { reason: `at most ${MAX_APPEND_BATCH} events per call` } });
    }
    const prepared = inputs.map((input) => this.core.prepareWithGroup(input));
    return this.serialize(async () => {
      const results: AppendResult[] = [];
      for (const one of prepared) results.push(await this.appendOne(one));
      return results;
    });
  }

  /** Writes the counts of windows that have ended (the alarm calls this). */
  flushDue(): Promise<void> {
    return this.serialize(async () => {
      this.scheduledFor = null;
      await this.writeCounts("due");
    });
  }

  /**
   * Every pending count is written, then the rows are read. On a full disk the counts stay
   * pending (written at the next chance) and the rows are read all the same: the owner must
   * be able to read the log exactly when the disk is full.
   */
  query(filter: unknown): Promise<SecurityEventPage> {
    return this.serialize(async () => {
      await this.writeCounts("all").catch((error: unknown) => {
        if (storageFullReason(error) === null) throw error;
      });
      return this.core.query(filter);
    });
  }

  /** Every pending count is written, then the chain is verified. */
  verify(anchor: unknown): Promise<VerifyResult> {
    return this.serialize(async () => {
      await this.writeCounts("all");
      return this.core.verify(anchor);
    });
  }

  /** Every pending count is written (before a checkpoint or a row the log writes itself). */
  flushPending(): Promise<void> {
    return this.serialize(() => this.writeCounts("all"));
  }

  /** Counts land in the segment they belong to before it is sealed. */
  rotate(reason: unknown): Promise<RotateResult> {
    return this.serialize(async () => {
      await this.writeCounts("all");
      return this.core.rotate(reason);
    });
  }

  enforceRetention(nowMs?: unknown): Promise<RetentionResult> {
    return this.serialize(async () => {
      await this.writeCounts("due");
      return this.core.enforceRetention(nowMs);
    });
  }

  private serialize<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async appendOne({ event, group }: { event: PreparedEvent; group: string | null }): Promise<AppendResult> {
    if (!isCounted(event)) {
      // Another kind of event: counts so far are written before it, so rows stay in time order.
      await this.writeCounts("all");
      return this.core.appendPrepared(event);
    }
    await this.writeCounts("due");
    const nowMs = this.now();
    const seen = this.windows.observe(
      {
        kind: event.kind,
        outcome: event.outcome === "allowed" ? "allowed" : "refused",
        principal: event.principal,
        subject: event.subject,
        detail: event.detail,
        group: group ?? event.subject,
      },
      nowMs,
      new Date(nowMs).toISOString(),
    );
    this.schedule();
    if (seen.write === "now") return this.core.appendPrepared(event);
    const head = this.core.head();
    return { seq: head.seq, mac: head.mac, counted: true };
  }

  /**
   * Chains count rows, then settles the windows: `due` those of ended windows; `all` every
   * pending count, windows staying open (a read, another kind of event, a rotation); `close`
   * every pending count, then every window is forgotten (a start).
   */
  private async writeCounts(which: "due" | "all" | "close"): Promise<void> {
    const nowMs = this.now();
    const due = this.windows.due(nowMs, which !== "due");
    for (const { row } of due) await this.core.appendPrepared(row);
    if (which === "close") this.windows.clear();
    else this.windows.settle(due, nowMs);
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduleAt === undefined) return;
    const next = this.windows.nextEndMs();
    if (next === null || (this.scheduledFor !== null && this.scheduledFor <= next)) return;
    this.scheduledFor = next;
    this.scheduleAt(next);
  }
}
