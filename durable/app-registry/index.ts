// AppRegistry: installed-app records (origin/resources/lifecycle, enabled, manifest, consent
// digest), each app's own config document (revision-guarded), the backend status and proxy
// secret the bridge reports, and app inboxes. Backend rows belong to one gateway start: they
// are stored (workerd unloads an idle object, and the proxy must still find a healthy
// backend afterwards) and cleared when a new start begins, since its backends are new.
import { claimStoreIdentity } from "../store-identity";
import {
  BACKEND_RESPONSE_TIMEOUT_CEILING_S,
  BACKEND_RESPONSE_TIMEOUT_DEFAULT_S,
  configGrantPaths,
} from "../../workers/contracts/manifest";
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../workers/env";
import type { AppGrants, AppRecord, AppView, BackendStatus, ProxyTarget } from "../../workers/contracts/app-record";
import { revisionOf } from "../../workers/contracts/revision";
import { APP_REGISTRY_SCHEMA } from "./schema";
import { INBOX_LIMITS } from "./limits";
import { isAppDeclarable } from "../../workers/contracts/event-names";

/** The sender platform events come from; no app can be named so (the name pattern has no `@`). */
const PLATFORM_SENDER = "@platform";
import { JOB_TIMEOUT_DEFAULT_S } from "../../workers/contracts/manifest";
import { nextFireAfter, parseCronSchedule } from "../../workers/contracts/cron-schedule";
import {
  MCP_FAILED_STARTS_LIMIT,
  MCP_FIRST_START_MS,
  mcpDefinition,
  mcpDefinitionDigest,
  mcpKey,
  type McpServerView,
  type McpStart,
} from "../../workers/contracts/mcp";
import { grantPatterns } from "../../workers/contracts/network-grant";
import { fireJob } from "../../workers/proxy/fire-job";
import { JOB_RUNS_KEPT, type JobRun, type JobView, type McpLaunchVerdict } from "./jobs-and-mcp";
import { isolateProbe, registryChanged } from "./change-epoch";

/** A delivery's outcome; `detail` names the quota an inbox is full at. */
export interface DeliveryResult {
  ok: boolean;
  reason?: "unknown_app" | "too_large" | "full";
  detail?: string;
}

export class AppRegistry extends DurableObject<Env> {
  private records = new Map<string, AppRecord>();
  private backends = new Map<string, BackendStatus>();
  private secrets = new Map<string, string>();
  // Until the host bridge has reported once, how many backends run is not known (null, never 0).
  private backendsKnown = false;
  // Bumped whenever an app's tokens are revoked, so a token cached by the worker is dropped;
  // the instance part changes whenever this object is loaded again (its counters start over).
  private tokenEpochs = new Map<string, number>();
  private readonly instance = crypto.randomUUID();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.blockConcurrencyWhile(async () => {
      registryChanged();
      ctx.storage.sql.exec(APP_REGISTRY_SCHEMA);
      claimStoreIdentity(ctx.storage.sql);
      for (const row of ctx.storage.sql.exec("SELECT record FROM apps")) {
        const record = JSON.parse(String(row.record)) as AppRecord;
        this.records.set(record.name, record);
      }
      const start = ctx.storage.sql
        .exec("SELECT started_at, backends_reported FROM gateway_start WHERE id = 1")
        .toArray()[0];
      if (start?.started_at !== env.STARTED_AT) {
        // A start of an earlier gateway's MCP server is over; missed job fires run once (alarm).
        ctx.storage.sql.exec("UPDATE mcp_servers SET starting_id = NULL, starting_since = NULL");
        await this.scheduleAlarm();
        ctx.storage.sql.exec("DELETE FROM backends");
        // A transition of an earlier start ended with it; the bridge's journals settle its files.
        ctx.storage.sql.exec("DELETE FROM transitions");
        ctx.storage.sql.exec(
          "INSERT OR REPLACE INTO gateway_start (id, started_at, backends_reported) VALUES (1, ?, 0)",
          env.STARTED_AT,
        );
        return;
      }
      this.backendsKnown = Number(start.backends_reported) === 1;
      for (const row of ctx.storage.sql.exec("SELECT name, status, secret FROM backends")) {
        this.backends.set(String(row.name), JSON.parse(String(row.status)) as BackendStatus);
        if (row.secret !== null) this.secrets.set(String(row.name), String(row.secret));
      }
    });
  }

  /** True when the caller's module instance is this object's, so it sees every registryChanged(). */
  async sharesIsolate(probe: string): Promise<boolean> {
    return probe === isolateProbe();
  }

  async counts(): Promise<{ installed: number; running: number | null }> {
    const running = [...this.backends.values()].filter((b) => b.running).length;
    return { installed: this.records.size, running: this.backendsKnown ? running : null };
  }

  /** The host bridge has started (or skipped) every backend it will start. */
  async backendsReported(): Promise<void> {
    this.backendsKnown = true;
    registryChanged();
    this.ctx.storage.sql.exec("UPDATE gateway_start SET backends_reported = 1 WHERE id = 1");
  }

  async list(): Promise<AppView[]> {
    return [...this.records.values()].sort((a, b) => a.name.localeCompare(b.name)).map((r) => this.view(r));
  }

  async get(name: string): Promise<AppView | null> {
    const record = this.records.get(name);
    return record ? this.view(record) : null;
  }

  async record(name: string): Promise<AppRecord | null> {
    return this.records.get(name) ?? null;
  }

  async names(): Promise<string[]> {
    return [...this.records.keys()];
  }

  /** Adds a record; false when the name is taken. */
  async add(record: AppRecord): Promise<boolean> {
    if (this.records.has(record.name)) return false;
    this.write(record);
    return true;
  }

  /** Replaces a record in place (native re-sync keeps the owner's on/off state). */
  async replace(record: AppRecord): Promise<void> {
    const before = this.records.get(record.name);
    this.write(record);
    // A changed definition starts afresh (MCP-04): its failures were another server's.
    for (const server of Object.keys(record.manifest.mcpServers ?? {})) {
      const was = before ? mcpDefinition(before.manifest, server) : null;
      const now = mcpDefinition(record.manifest, server);
      if (JSON.stringify(was) !== JSON.stringify(now))
        this.ctx.storage.sql.exec(
          "UPDATE mcp_servers SET failed_starts = 0 WHERE key = ?",
          mcpKey(record.name, server),
        );
    }
  }

  async remove(name: string): Promise<boolean> {
    const existed = this.records.delete(name);
    registryChanged();
    this.forgetBackend(name);
    this.bumpTokenEpoch(name);
    this.ctx.storage.sql.exec("DELETE FROM apps WHERE name = ?", name);
    this.ctx.storage.sql.exec("DELETE FROM inbox WHERE recipient = ?", name);
    this.ctx.storage.sql.exec("DELETE FROM app_config WHERE name = ?", name);
    this.removeJobsOf(name);
    this.ctx.storage.sql.exec("DELETE FROM mcp_servers WHERE app = ?", name);
    return existed;
  }

  async setEnabled(name: string, enabled: boolean): Promise<AppView | null> {
    const record = this.records.get(name);
    if (!record) return null;
    this.write({ ...record, enabled });
    this.bumpTokenEpoch(name);
    return this.view(this.records.get(name)!);
  }

  /**
   * Takes the app's one transition lock (LIFE-01): a token while no other transition of the
   * app is under way, otherwise the kind of the one that is. Held in storage, so an object
   * unloaded mid-transition still knows; it lapses after `ttlMs` in case its holder vanished.
   */
  async beginTransition(
    name: string,
    kind: string,
    now: number,
    ttlMs: number,
  ): Promise<{ ok: true; token: string } | { ok: false; kind: string }> {
    const held = this.ctx.storage.sql
      .exec("SELECT kind, expires_at FROM transitions WHERE name = ?", name)
      .toArray()[0];
    if (held && Number(held.expires_at) > now) return { ok: false, kind: String(held.kind) };
    const token = crypto.randomUUID();
    this.ctx.storage.sql.exec(
      "INSERT OR REPLACE INTO transitions (name, kind, token, expires_at) VALUES (?, ?, ?, ?)",
      name,
      kind,
      token,
      now + ttlMs,
    );
    return { ok: true, token };
  }

  /** Releases the lock `token` holds; a lock another transition took since is left alone. */
  async endTransition(name: string, token: string): Promise<void> {
    this.ctx.storage.sql.exec("DELETE FROM transitions WHERE name = ? AND token = ?", name, token);
  }

  async setBackend(name: string, status: BackendStatus, secret?: string): Promise<boolean> {
    if (!this.records.has(name)) return false;
    this.backends.set(name, status);
    registryChanged();
    if (secret !== undefined) this.secrets.set(name, secret);
    if (!status.running) this.secrets.delete(name);
    this.ctx.storage.sql.exec(
      "INSERT OR REPLACE INTO backends (name, status, secret) VALUES (?, ?, ?)",
      name,
      JSON.stringify(status),
      this.secrets.get(name) ?? null,
    );
    return true;
  }

  private forgetBackend(name: string): void {
    this.backends.delete(name);
    this.secrets.delete(name);
    registryChanged();
    this.ctx.storage.sql.exec("DELETE FROM backends WHERE name = ?", name);
  }

  private bumpTokenEpoch(name: string): void {
    this.tokenEpochs.set(name, (this.tokenEpochs.get(name) ?? 0) + 1);
  }

  /** The owner's proxy.response_timeout_s of this start, for apps whose manifest names none. */
  private defaultResponseTimeoutS(): number {
    const configured = Number(this.env.PROXY_TIMEOUT_S);
    return Number.isInteger(configured) && configured >= 1 ? configured : BACKEND_RESPONSE_TIMEOUT_DEFAULT_S;
  }

  async proxyTarget(name: string): Promise<ProxyTarget | null> {
    const record = this.records.get(name);
    if (!record) return null;
    const backend = this.backends.get(name);
    return {
      enabled: record.enabled,
      port: backend?.running ? backend.port : null,
      slot: backend?.running ? (backend.slot ?? null) : null,
      healthy: Boolean(backend?.running && backend.healthy),
      secret: this.secrets.get(name) ?? null,
      healthPath: record.manifest.backend?.healthCheck ?? "/health",
      responseTimeoutMs:
        1000 *
        Math.min(
          BACKEND_RESPONSE_TIMEOUT_CEILING_S,
          record.manifest.backend?.responseTimeoutSeconds ?? this.defaultResponseTimeoutS(),
        ),
      tokenEpoch: `${this.instance}:${this.tokenEpochs.get(name) ?? 0}`,
    };
  }

  /** What the app permission gate needs of an app, or null for an unknown one. */
  async grants(name: string): Promise<AppGrants | null> {
    const record = this.records.get(name);
    if (!record) return null;
    const permissions = record.manifest.permissions ?? {};
    // A grant that is not a list is no grant: iterating "*" as characters would widen it (PERM-02).
    const list = (value: unknown) =>
      Array.isArray(value) && value.every((item) => typeof item === "string") ? [...value] : null;
    return {
      enabled: record.enabled,
      api: list(permissions.api),
      appMessaging: list(permissions.appMessaging),
      events: list(permissions.events),
      approvals: permissions.approvals === true,
      config: configGrantPaths(permissions.config),
    };
  }

  /** The app's own config document and its revision; null for an unknown app. */
  async config(name: string): Promise<{ config: Record<string, unknown>; revision: string } | null> {
    if (!this.records.has(name)) return null;
    const row = this.ctx.storage.sql.exec("SELECT config FROM app_config WHERE name = ?", name).toArray()[0];
    const config = row ? (JSON.parse(String(row.config)) as Record<string, unknown>) : {};
    return { config, revision: await revisionOf(config) };
  }

  /**
   * Replaces the app's config only if it is still at `basedOn` (read and write in one turn of
   * this object, so two writers can never both win): `stale` otherwise, nothing written.
   */
  async replaceConfig(
    name: string,
    basedOn: string,
    config: Record<string, unknown>,
  ): Promise<{ ok: true; revision: string } | { ok: false; reason: "unknown_app" | "stale" }> {
    const current = await this.config(name);
    if (!current) return { ok: false, reason: "unknown_app" };
    if (current.revision !== basedOn) return { ok: false, reason: "stale" };
    this.ctx.storage.sql.exec(
      "INSERT OR REPLACE INTO app_config (name, config) VALUES (?, ?)",
      name,
      JSON.stringify(config),
    );
    return { ok: true, revision: await revisionOf(config) };
  }

  /**
   * Stores a message for `recipient` unless its inbox is at its quota (count or bytes), checked
   * and written in one turn of this object so concurrent senders cannot overshoot it together.
   */
  async deliver(recipient: string, sender: string, body: unknown, sentAt: string): Promise<DeliveryResult> {
    if (!this.records.has(recipient)) return { ok: false, reason: "unknown_app" };
    const text = JSON.stringify(body);
    const bytes = new TextEncoder().encode(text).byteLength;
    if (bytes > INBOX_LIMITS.messageBytes) return { ok: false, reason: "too_large" };
    const held = this.ctx.storage.sql
      .exec(
        "SELECT COUNT(*) AS messages, COALESCE(SUM(LENGTH(CAST(body AS BLOB))), 0) AS bytes FROM inbox WHERE recipient = ?",
        recipient,
      )
      .toArray()[0]!;
    if (Number(held.messages) + 1 > INBOX_LIMITS.messages)
      return { ok: false, reason: "full", detail: `${INBOX_LIMITS.messages} messages` };
    if (Number(held.bytes) + bytes > INBOX_LIMITS.bytes)
      return { ok: false, reason: "full", detail: `${INBOX_LIMITS.bytes} bytes` };
    this.ctx.storage.sql.exec(
      "INSERT INTO inbox (recipient, sender, body, sent_at) VALUES (?, ?, ?, ?)",
      recipient,
      sender,
      text,
      sentAt,
    );
    return { ok: true };
  }

  /**
   * EVT-01/02: a platform event lands in the inbox of every enabled app whose
   * `eventSubscriptions` lists its exact name, from the sender `@platform`, identifiers only.
   * Answers the apps it could not be delivered to, and why (their inbox is at its quota).
   */
  async deliverPlatformEvent(
    type: string,
    data: Record<string, string | number | boolean | null>,
    sentAt: string,
  ): Promise<Array<{ app: string; reason: string }>> {
    if (!isAppDeclarable(type)) return [];
    const refused: Array<{ app: string; reason: string }> = [];
    for (const record of this.records.values()) {
      const subscriptions = record.manifest.permissions?.eventSubscriptions;
      if (!record.enabled || !Array.isArray(subscriptions) || !subscriptions.includes(type)) continue;
      const delivered = await this.deliver(record.name, PLATFORM_SENDER, { event: type, data }, sentAt);
      if (!delivered.ok) refused.push({ app: record.name, reason: delivered.detail ?? delivered.reason ?? "refused" });
    }
    return refused;
  }

  /** Returns and removes every message waiting for `recipient`. */
  async drain(recipient: string): Promise<Array<{ from: string; body: unknown; sentAt: string }>> {
    const rows = this.ctx.storage.sql
      .exec("SELECT id, sender, body, sent_at FROM inbox WHERE recipient = ? ORDER BY id", recipient)
      .toArray();
    this.ctx.storage.sql.exec("DELETE FROM inbox WHERE recipient = ?", recipient);
    return rows.map((row) => ({
      from: String(row.sender),
      body: JSON.parse(String(row.body)),
      sentAt: String(row.sent_at),
    }));
  }

  // ---- scheduled jobs (issue 20) ------------------------------------------------------------

  /**
   * Makes the app's job rows match its record (CRON-01): the routed jobs of an app holding
   * permissions.cron. A job keeps its next fire while its schedule is unchanged; a disabled
   * app's jobs keep their rows and history but have no next fire, so enabling it again never
   * fires what was missed meanwhile.
   */
  async reconcileJobs(name: string, now: number): Promise<JobView[]> {
    const record = this.records.get(name);
    if (!record) {
      this.removeJobsOf(name);
      return [];
    }
    const wanted =
      record.manifest.permissions?.cron === true
        ? (record.manifest.crons ?? []).filter((j) => j.route !== undefined && j.enabled !== false)
        : [];
    const existing = new Map(
      this.ctx.storage.sql
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
      this.ctx.storage.sql.exec(
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
      this.ctx.storage.sql.exec("DELETE FROM jobs WHERE app = ? AND name = ?", name, gone);
      this.ctx.storage.sql.exec("DELETE FROM job_runs WHERE app = ? AND job = ?", name, gone);
    }
    await this.scheduleAlarm();
    return this.jobs(name);
  }

  /** Removes every job of the app and its history in one transaction (UNIN-02: first, before anything else is torn down). */
  async removeJobs(name: string): Promise<number> {
    const count = this.removeJobsOf(name);
    await this.scheduleAlarm();
    return count;
  }

  private removeJobsOf(name: string): number {
    return this.ctx.storage.transactionSync(() => {
      const count = this.ctx.storage.sql.exec("SELECT COUNT(*) AS n FROM jobs WHERE app = ?", name).one().n as number;
      this.ctx.storage.sql.exec("DELETE FROM jobs WHERE app = ?", name);
      this.ctx.storage.sql.exec("DELETE FROM job_runs WHERE app = ?", name);
      return Number(count);
    });
  }

  /** The app's jobs with their next fire and their last fires, newest first. */
  async jobs(name: string): Promise<JobView[]> {
    const record = this.records.get(name);
    return this.ctx.storage.sql
      .exec("SELECT name, schedule, zone, route, timeout_s, next_fire FROM jobs WHERE app = ? ORDER BY name", name)
      .toArray()
      .map((row) => ({
        name: String(row.name),
        schedule: String(row.schedule),
        timezone: String(row.zone),
        route: String(row.route),
        timeoutSeconds: Number(row.timeout_s),
        nextFire: row.next_fire === null ? null : new Date(Number(row.next_fire)).toISOString(),
        paused: !record?.enabled,
        history: this.ctx.storage.sql
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
   * one held by a transition. Each job's next fire is claimed before its request goes out, so
   * two runs of this never fire one job twice.
   */
  async runDueJobs(now: number): Promise<number> {
    if (!this.backendsKnown) {
      // At a start the backends are not up yet: a missed fire waits for them.
      await this.scheduleAlarm(Date.now() + 5_000);
      return 0;
    }
    const due = this.ctx.storage.sql
      .exec(
        "SELECT app, name, schedule, zone, route, timeout_s, next_fire FROM jobs WHERE next_fire IS NOT NULL AND next_fire <= ?",
        now,
      )
      .toArray();
    const fires: Array<Promise<void>> = [];
    for (const row of due) {
      const app = String(row.app);
      const job = String(row.name);
      const record = this.records.get(app);
      const schedule = parseCronSchedule(String(row.schedule), String(row.zone));
      const next = record?.enabled && typeof schedule !== "string" ? nextFireAfter(schedule, now) : null;
      this.ctx.storage.sql.exec("UPDATE jobs SET next_fire = ? WHERE app = ? AND name = ?", next, app, job);
      if (!record?.enabled) continue;
      const scheduledFor = Number(row.next_fire);
      const held = this.ctx.storage.sql
        .exec("SELECT kind, expires_at FROM transitions WHERE name = ?", app)
        .toArray()[0];
      if (held && Number(held.expires_at) > Date.now()) {
        this.keepRun(app, job, {
          scheduledFor,
          startedAt: now,
          status: null,
          durationMs: 0,
          outcome: "skipped",
          error: `the app was held by its ${String(held.kind)}`,
        });
        continue;
      }
      const target = await this.proxyTarget(app);
      fires.push(
        fireJob(this.env, target!, {
          app,
          job,
          route: String(row.route),
          timeoutMs: Number(row.timeout_s) * 1000,
          scheduledFor,
        }).then((outcome) => {
          // An app removed while its job ran keeps no history.
          if (!this.records.has(app)) return;
          this.keepRun(app, job, { scheduledFor, startedAt: now, ...outcome });
        }),
      );
    }
    await Promise.all(fires);
    await this.scheduleAlarm();
    return fires.length;
  }

  private keepRun(
    app: string,
    job: string,
    run: {
      scheduledFor: number;
      startedAt: number;
      status: number | null;
      durationMs: number;
      outcome: JobRun["outcome"];
      error: string | null;
    },
  ): void {
    this.ctx.storage.sql.exec(
      "INSERT INTO job_runs (app, job, scheduled_for, started_at, status, duration_ms, outcome, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      app,
      job,
      run.scheduledFor,
      run.startedAt,
      run.status,
      run.durationMs,
      run.outcome,
      run.error,
    );
    this.ctx.storage.sql.exec(
      "DELETE FROM job_runs WHERE app = ? AND job = ? AND id NOT IN (SELECT id FROM job_runs WHERE app = ? AND job = ? ORDER BY id DESC LIMIT ?)",
      app,
      job,
      app,
      job,
      JOB_RUNS_KEPT,
    );
  }

  /** The alarm is set for the earliest next fire of any job (or `at`, when sooner). */
  private async scheduleAlarm(at?: number): Promise<void> {
    const row = this.ctx.storage.sql
      .exec("SELECT MIN(next_fire) AS next FROM jobs WHERE next_fire IS NOT NULL")
      .toArray()[0];
    const earliest = row?.next === null || row?.next === undefined ? null : Number(row.next);
    const when = at !== undefined && (earliest === null || at < earliest) ? at : earliest;
    if (when === null) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(Math.max(when, Date.now()));
  }

  async alarm(): Promise<void> {
    await this.runDueJobs(Date.now());
  }

  // ---- MCP servers (issue 20) ----------------------------------------------------------------

  private mcpRow(key: string): {
    owner_enabled: number;
    failed_starts: number;
    last_start: string | null;
    starting_id: string | null;
    starting_since: number | null;
  } | null {
    const row = this.ctx.storage.sql
      .exec(
        "SELECT owner_enabled, failed_starts, last_start, starting_id, starting_since FROM mcp_servers WHERE key = ?",
        key,
      )
      .toArray()[0];
    if (!row) return null;
    return {
      owner_enabled: Number(row.owner_enabled),
      failed_starts: Number(row.failed_starts),
      last_start: row.last_start === null ? null : String(row.last_start),
      starting_id: row.starting_id === null ? null : String(row.starting_id),
      starting_since: row.starting_since === null ? null : Number(row.starting_since),
    };
  }

  private ensureMcpRow(app: string, key: string): void {
    this.ctx.storage.sql.exec(
      "INSERT OR IGNORE INTO mcp_servers (key, app, owner_enabled, failed_starts) VALUES (?, ?, 1, 0)",
      key,
      app,
    );
  }

  /** Every server the installed apps declare, with its state and last start. */
  async mcpServers(now: number): Promise<McpServerView[]> {
    const out: McpServerView[] = [];
    for (const record of [...this.records.values()].sort((a, b) => a.name.localeCompare(b.name))) {
      for (const server of Object.keys(record.manifest.mcpServers ?? {}).sort()) {
        const key = mcpKey(record.name, server);
        const definition = mcpDefinition(record.manifest, server)!;
        const row = this.mcpRow(key);
        const ownerEnabled = row ? row.owner_enabled === 1 : true;
        const failedStarts = row?.failed_starts ?? 0;
        const starting =
          row?.starting_since !== null &&
          row?.starting_since !== undefined &&
          now - row.starting_since < MCP_FIRST_START_MS;
        const state: McpServerView["state"] = !record.enabled
          ? "app_disabled"
          : !ownerEnabled
            ? "off"
            : failedStarts >= MCP_FAILED_STARTS_LIMIT
              ? "failing"
              : starting
                ? "starting"
                : "registered";
        out.push({
          key,
          app: record.name,
          server,
          transport: definition.transport,
          state,
          ownerEnabled,
          failedStarts,
          lastStart: row?.last_start ? (JSON.parse(row.last_start) as McpStart) : null,
          definitionDigest: await mcpDefinitionDigest(definition),
        });
      }
    }
    return out;
  }

  /** The owner's switch of one server; null when no installed app declares it. */
  async mcpSetEnabled(app: string, server: string, enabled: boolean): Promise<boolean> {
    const record = this.records.get(app);
    if (!record || !mcpDefinition(record.manifest, server)) return false;
    const key = mcpKey(app, server);
    this.ensureMcpRow(app, key);
    this.ctx.storage.sql.exec("UPDATE mcp_servers SET owner_enabled = ? WHERE key = ?", enabled ? 1 : 0, key);
    return true;
  }

  /** The owner's Retry: the failed starts are forgotten, so the next launch starts it (MCP-04). */
  async mcpRetry(app: string, server: string): Promise<boolean> {
    const record = this.records.get(app);
    if (!record || !mcpDefinition(record.manifest, server)) return false;
    const key = mcpKey(app, server);
    this.ensureMcpRow(app, key);
    this.ctx.storage.sql.exec("UPDATE mcp_servers SET failed_starts = 0 WHERE key = ?", key);
    return true;
  }

  /**
   * Decides whether `mcp run` may start a server now (MCP-04/05/07): installed, enabled, on,
   * not failing, no other start under way, and the definition it found on disk is the one the
   * owner consented to. An allowed start is marked as under way until its outcome is reported.
   */
  async mcpLaunch(app: string, server: string, definitionDigest: string, now: number): Promise<McpLaunchVerdict> {
    const key = mcpKey(app, server);
    const record = this.records.get(app);
    const consented = record ? mcpDefinition(record.manifest, server) : null;
    if (!record || !consented) return { ok: false, code: "mcp_server_not_found", vars: { key } };
    if (!record.enabled) return { ok: false, code: "app_disabled", vars: { name: app } };
    if (consented.transport !== "stdio")
      return { ok: false, code: "mcp_not_stdio", vars: { key, transport: consented.transport } };
    if ((await mcpDefinitionDigest(consented)) !== definitionDigest) {
      return {
        ok: false,
        code: "mcp_definition_changed",
        vars: { key, reason: "the app's folder declares it differently from the manifest the owner consented to" },
      };
    }
    this.ensureMcpRow(app, key);
    const row = this.mcpRow(key)!;
    if (row.owner_enabled !== 1) return { ok: false, code: "mcp_server_off", vars: { key } };
    if (row.failed_starts >= MCP_FAILED_STARTS_LIMIT)
      return { ok: false, code: "mcp_server_failing", vars: { key, count: row.failed_starts, app, server } };
    if (row.starting_since !== null && now - row.starting_since < MCP_FIRST_START_MS)
      return { ok: false, code: "mcp_server_starting", vars: { key } };
    const startId = crypto.randomUUID();
    this.ctx.storage.sql.exec(
      "UPDATE mcp_servers SET starting_id = ?, starting_since = ? WHERE key = ?",
      startId,
      now,
      key,
    );
    const declared = record.manifest.mcpServers![server]!;
    return {
      ok: true,
      answer: {
        app,
        server,
        command: consented.command!,
        args: consented.args,
        env: { ...(declared.env ?? {}) },
        hasStorage: record.manifest.permissions?.storage === true,
        network:
          grantPatterns(record.manifest.permissions?.network).length > 0
            ? [...(record.manifest.permissions!.network as string[])]
            : [],
        startId,
      },
    };
  }

  /** Whether a running server may go on: its app still installed and enabled and the server on; else why not (MCP-01). */
  async mcpAlive(app: string, server: string): Promise<{ alive: boolean; reason: string | null }> {
    const record = this.records.get(app);
    if (!record || !mcpDefinition(record.manifest, server))
      return { alive: false, reason: "the app is no longer installed" };
    if (!record.enabled) return { alive: false, reason: "the app was disabled" };
    if (this.mcpRow(mcpKey(app, server))?.owner_enabled === 0)
      return { alive: false, reason: "the owner turned the server off" };
    return { alive: true, reason: null };
  }

  /** Records how a start went: a failure counts towards the limit, a start that answered clears it. */
  async mcpStarted(
    app: string,
    server: string,
    report: { startId: string; ok: boolean; exitCode: number | null; reason: string | null },
    now: number,
  ): Promise<boolean> {
    const key = mcpKey(app, server);
    const row = this.mcpRow(key);
    if (!row) return false;
    const start: McpStart = {
      at: new Date(now).toISOString(),
      ok: report.ok,
      exitCode: report.exitCode,
      reason: report.reason,
    };
    const failed = report.ok ? 0 : row.failed_starts + 1;
    const stillStarting = row.starting_id === report.startId;
    this.ctx.storage.sql.exec(
      `UPDATE mcp_servers SET failed_starts = ?, last_start = ?${stillStarting ? ", starting_id = NULL, starting_since = NULL" : ""} WHERE key = ?`,
      failed,
      JSON.stringify(start),
      key,
    );
    return true;
  }

  private write(record: AppRecord): void {
    this.records.set(record.name, record);
    registryChanged();
    this.ctx.storage.sql.exec(
      "INSERT OR REPLACE INTO apps (name, record) VALUES (?, ?)",
      record.name,
      JSON.stringify(record),
    );
  }

  private view(record: AppRecord): AppView {
    const manifest = record.manifest;
    return {
      name: record.name,
      displayName: record.displayName,
      version: record.version,
      origin: record.origin,
      resources: record.resources,
      lifecycle: record.lifecycle,
      enabled: record.enabled,
      native: record.origin === "builtin",
      requires: manifest.requires ?? [],
      consentDigest: record.consentDigest,
      installedAt: record.installedAt,
      hasBackend: Boolean(manifest.backend),
      ui: manifest.ui?.entry ? { entry: manifest.ui.entry, revision: record.uiRevision } : null,
      backend: manifest.backend ? (this.backends.get(record.name) ?? null) : null,
    };
  }
}
