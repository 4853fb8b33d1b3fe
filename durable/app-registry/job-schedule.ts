// Each app's scheduled jobs and their last fires (CRON-01). The object's one alarm is set for
// the earliest next fire; a fire is claimed before its request goes out, so two runs never
// fire one job twice. A fire is in the history from before its request goes out ("running"),
// so one that workerd's death cut short is found by the next instance of the object and kept
// as "interrupted" instead of vanishing.
import type { AppRecord } from "../../kernel/contracts/app-record";
import { JOB_TIMEOUT_DEFAULT_S } from "../../kernel/contracts/manifest";
import { nextFireAfter, parseCronSchedule } from "../../kernel/time/cron-schedule";
import { JOB_RUNS_KEPT } from "./jobs-and-mcp";
import type { JobRun, JobView } from "../../kernel/contracts/scheduled-jobs";

/** What an interrupted fire's row says: the gateway cannot know whether the backend finished the job. */
export const INTERRUPTED_FIRE =
  "the gateway stopped (workerd exited) before the backend answered; whether the job finished is not known";

interface KeptRun {
  scheduledFor: number;
  startedAt: number;
  status: number | null;
  durationMs: number;
  outcome: JobRun["outcome"];
  error: string | null;
}

/** What firing a due job needs to know of the rest of the registry. */
export interface DueJobContext {
  isEnabled(app: string): boolean;
  /** The kind of the transition holding the app, or null. */
  heldBy(app: string): string | null;
  isInstalled(app: string): boolean;
  fire(
    app: string,
    request: { job: string; route: string; timeoutMs: number; scheduledFor: number },
  ): Promise<Omit<KeptRun, "scheduledFor" | "startedAt">>;
}

export class JobSchedule {
  constructor(private readonly storage: DurableObjectStorage) {}

  private get sql(): SqlStorage {
    return this.storage.sql;
  }

  /**
   * Makes the app's job rows match its record: the routed jobs of an app holding
   * permissions.cron. A job keeps its next fire while its schedule is unchanged; a disabled
   * app's jobs keep their rows and history but have no next fire, so enabling it again never
   * fires what was missed meanwhile.
   */
  async reconcile(name: string, record: AppRecord | undefined, now: number): Promise<JobView[]> {
    if (!record) {
      this.removeOf(name);
      return [];
    }
    const wanted =
      record.manifest.permissions?.cron === true
        ? (record.manifest.crons ?? []).filter((j) => j.route !== undefined && j.enabled !== false)
        : [];
    const existing = new Map(
      this.sql
        .exec("SELECT name, schedule, zone, next_fire FROM jobs WHERE app = ?", name)
        .toArray()
        .map((row) => [String(row.name), row]),
    );
    for (const job of wanted) {
      const zone = job.timezone ?? "UTC";
      const row = existing.get(job.name);
      const schedule = parseCronSchedule(job.schedule, zone);
      let next: number | null = null;
      if (record.enabled && typeof schedule !== "string") {
        const unchanged =
          row && String(row.schedule) === job.schedule && String(row.zone) === zone && row.next_fire !== null;
        next = unchanged ? Number(row.next_fire) : nextFireAfter(schedule, now);
      }
      this.sql.exec(
        "INSERT OR REPLACE INTO jobs (app, name, schedule, zone, route, timeout_s, next_fire) VALUES (?, ?, ?, ?, ?, ?, ?)",
        name,
        job.name,
        job.schedule,
        zone,
        job.route!,
        job.timeoutSeconds ?? JOB_TIMEOUT_DEFAULT_S,
        next,
      );
      existing.delete(job.name);
    }
    for (const gone of existing.keys()) {
      this.sql.exec("DELETE FROM jobs WHERE app = ? AND name = ?", name, gone);
      this.sql.exec("DELETE FROM job_runs WHERE app = ? AND job = ?", name, gone);
    }
    await this.scheduleAlarm();
    return this.views(name, record.enabled);
  }

  /** Removes every job of the app and its history in one transaction. */
  removeOf(name: string): number {
    return this.storage.transactionSync(() => {
      const count = this.sql.exec("SELECT COUNT(*) AS n FROM jobs WHERE app = ?", name).one().n as number;
      this.sql.exec("DELETE FROM jobs WHERE app = ?", name);
      this.sql.exec("DELETE FROM job_runs WHERE app = ?", name);
      return Number(count);
    });
  }

  /** The app's jobs with their next fire and their last fires, newest first. */
  views(name: string, isEnabled: boolean): JobView[] {
    return this.sql
      .exec("SELECT name, schedule, zone, route, timeout_s, next_fire FROM jobs WHERE app = ? ORDER BY name", name)
      .toArray()
      .map((row) => ({
        name: String(row.name),
        schedule: String(row.schedule),
        timezone: String(row.zone),
        route: String(row.route),
        timeoutSeconds: Number(row.timeout_s),
        nextFire: row.next_fire === null ? null : new Date(Number(row.next_fire)).toISOString(),
        paused: !isEnabled,
        history: this.sql
          .exec(
            "SELECT scheduled_for, started_at, status, duration_ms, outcome, error FROM job_runs WHERE app = ? AND job = ? ORDER BY id DESC",
            name,
            String(row.name),
          )
          .toArray()
          .map((run): JobRun => ({
            scheduledFor: new Date(Number(run.scheduled_for)).toISOString(),
            startedAt: new Date(Number(run.started_at)).toISOString(),
            outcome: String(run.outcome) as JobRun["outcome"],
            status: run.status === null ? null : Number(run.status),
            durationMs: Number(run.duration_ms),
            error: run.error === null ? null : String(run.error),
          })),
      }));
  }

  /**
   * Fires every job due at `now`, once each however many fires it missed (a gateway that was
   * down runs a missed fire once at its next start, at most), and never for a disabled app or
   * one held by a transition.
   */
  async runDue(now: number, registry: DueJobContext): Promise<number> {
    const due = this.sql
      .exec(
        "SELECT app, name, schedule, zone, route, timeout_s, next_fire FROM jobs WHERE next_fire IS NOT NULL AND next_fire <= ?",
        now,
      )
      .toArray();
    const fires: Array<Promise<void>> = [];
    for (const row of due) {
      const app = String(row.app);
      const job = String(row.name);
      const isEnabled = registry.isEnabled(app);
      const schedule = parseCronSchedule(String(row.schedule), String(row.zone));
      const next = isEnabled && typeof schedule !== "string" ? nextFireAfter(schedule, now) : null;
      this.sql.exec("UPDATE jobs SET next_fire = ? WHERE app = ? AND name = ?", next, app, job);
      if (!isEnabled) continue;
      const scheduledFor = Number(row.next_fire);
      const held = registry.heldBy(app);
      if (held !== null) {
        this.keepRun(app, job, {
          scheduledFor,
          startedAt: now,
          status: null,
          durationMs: 0,
          outcome: "skipped",
          error: `the app was held by its ${held}`,
        });
        continue;
      }
      const run = this.keepRun(app, job, {
        scheduledFor,
        startedAt: now,
        status: null,
        durationMs: 0,
        outcome: "running",
        error: null,
      });
      fires.push(
        registry
          .fire(app, { job, route: String(row.route), timeoutMs: Number(row.timeout_s) * 1000, scheduledFor })
          .then((outcome) => {
            // An app removed while its job ran keeps no history (its rows went with it).
            if (!registry.isInstalled(app)) return;
            this.sql.exec(
              "UPDATE job_runs SET status = ?, duration_ms = ?, outcome = ?, error = ? WHERE id = ?",
              outcome.status,
              outcome.durationMs,
              outcome.outcome,
              outcome.error,
              run,
            );
          }),
      );
    }
    await Promise.all(fires);
    await this.scheduleAlarm();
    return fires.length;
  }

  /**
   * Fires still "running" when the object starts were cut short by the end of the instance that
   * sent them (workerd died or was restarted): none of this instance's has begun yet.
   */
  interruptLeftFires(): number {
    return this.sql.exec(
      "UPDATE job_runs SET outcome = 'interrupted', error = ? WHERE outcome = 'running'",
      INTERRUPTED_FIRE,
    ).rowsWritten;
  }

  /** Keeps one fire in the history (the last JOB_RUNS_KEPT of the job stay); answers its row id. */
  private keepRun(app: string, job: string, run: KeptRun): number {
    const id = this.sql
      .exec(
        "INSERT INTO job_runs (app, job, scheduled_for, started_at, status, duration_ms, outcome, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        app,
        job,
        run.scheduledFor,
        run.startedAt,
        run.status,
        run.durationMs,
        run.outcome,
        run.error,
      )
      .one().id as number;
    this.sql.exec(
      "DELETE FROM job_runs WHERE app = ? AND job = ? AND id NOT IN (SELECT id FROM job_runs WHERE app = ? AND job = ? ORDER BY id DESC LIMIT ?)",
      app,
      job,
      app,
      job,
      JOB_RUNS_KEPT,
    );
    return id;
  }

  /** The alarm is set for the earliest next fire of any job (or `at`, when sooner). */
  async scheduleAlarm(at?: number): Promise<void> {
    const row = this.sql.exec("SELECT MIN(next_fire) AS next FROM jobs WHERE next_fire IS NOT NULL").toArray()[0];
    const earliest = row?.next === null || row?.next === undefined ? null : Number(row.next);
    const when = at !== undefined && (earliest === null || at < earliest) ? at : earliest;
    if (when === null) await this.storage.deleteAlarm();
    else await this.storage.setAlarm(Math.max(when, Date.now()));
  }
}
