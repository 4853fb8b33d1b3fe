// The backends the host bridge reported during this gateway start, with each one's proxy
// secret. They are stored (workerd unloads an idle object, and the proxy must still find a
// healthy backend afterwards) and cleared when a new start begins, since its backends are new.
import type { BackendStatus } from "../../kernel/contracts/app-record";
import { registryEpoch } from "../change-epoch";

export class BackendReports {
  private readonly statuses = new Map<string, BackendStatus>();
  private readonly secrets = new Map<string, string>();
  // Until the host bridge has reported once, how many backends run is not known (null, never 0).
  private reportedAll = false;
  /** Who waits for a backend's first healthy report (whenHealthy); woken by set(). */
  private readonly healthWaiters = new Map<string, Set<() => void>>();

  constructor(private readonly sql: SqlStorage) {}

  /** Reads back this start's reports (the object was unloaded and loaded again). */
  load(): void {
    const start = this.sql.exec("SELECT backends_reported FROM gateway_start WHERE id = 1").toArray()[0];
    this.reportedAll = Number(start?.backends_reported) === 1;
    for (const row of this.sql.exec("SELECT name, status, secret FROM backends")) {
      this.statuses.set(String(row.name), JSON.parse(String(row.status)) as BackendStatus);
      if (row.secret !== null) this.secrets.set(String(row.name), String(row.secret));
    }
  }

  /** A new gateway start: no backend of an earlier one is running. */
  beginStart(startedAt: string): void {
    registryEpoch.bump();
    this.sql.exec("DELETE FROM backends");
    this.sql.exec(
      "INSERT OR REPLACE INTO gateway_start (id, started_at, backends_reported) VALUES (1, ?, 0)",
      startedAt,
    );
  }

  markAllReported(): void {
    registryEpoch.bump();
    this.reportedAll = true;
    this.sql.exec("UPDATE gateway_start SET backends_reported = 1 WHERE id = 1");
  }

  /** Whether the bridge has started (or skipped) every backend it will start. */
  get isReported(): boolean {
    return this.reportedAll;
  }

  running(): number | null {
    return this.reportedAll ? [...this.statuses.values()].filter((b) => b.running).length : null;
  }

  status(name: string): BackendStatus | undefined {
    return this.statuses.get(name);
  }

  secret(name: string): string | null {
    return this.secrets.get(name) ?? null;
  }

  /**
   * Resolves once the backend is reported healthy, it stops running, or `timeoutMs` passes,
   * whichever is first (at once when it is not spawned-and-waiting-for-its-health-check).
   */
  whenHealthy(name: string, timeoutMs: number): Promise<void> {
    const starting = (status: BackendStatus | undefined) => status?.running === true && !status.healthy;
    if (!starting(this.statuses.get(name))) return Promise.resolve();
    return new Promise((resolve) => {
      const waiters = this.healthWaiters.get(name) ?? new Set<() => void>();
      this.healthWaiters.set(name, waiters);
      const finish = () => {
        clearTimeout(timer);
        waiters.delete(check);
        if (waiters.size === 0) this.healthWaiters.delete(name);
        resolve();
      };
      const check = () => {
        if (!starting(this.statuses.get(name))) finish();
      };
      const timer = setTimeout(finish, timeoutMs);
      waiters.add(check);
    });
  }

  /** Wakes whoever waits for the backend's health: it was reported again, or forgotten. */
  private wake(name: string): void {
    for (const check of [...(this.healthWaiters.get(name) ?? [])]) check();
  }

  /** A stopped backend's secret goes with it: a later one gets a new secret. */
  set(name: string, status: BackendStatus, secret?: string): void {
    registryEpoch.bump();
    this.statuses.set(name, status);
    this.wake(name);
    if (secret !== undefined) this.secrets.set(name, secret);
    if (!status.running) this.secrets.delete(name);
    this.sql.exec(
      "INSERT OR REPLACE INTO backends (name, status, secret) VALUES (?, ?, ?)",
      name,
      JSON.stringify(status),
      this.secrets.get(name) ?? null,
    );
  }

  forget(name: string): void {
    registryEpoch.bump();
    this.statuses.delete(name);
    this.wake(name);
    this.secrets.delete(name);
    this.sql.exec("DELETE FROM backends WHERE name = ?", name);
  }
}
