// AppRegistry: installed-app records (origin/resources/lifecycle, enabled, manifest, consent
// digest) and everything kept per install: its config document, the backend status and proxy
// secret the bridge reports, its inbox, its transition lock, its jobs and its MCP servers.
// This class is the one owner of these tables (schema.ts); each concern is one module beside it.
import { DurableObject } from "cloudflare:workers";
import { exportStore } from "../store-export";
import type { StoreExport } from "../../kernel/contracts/durability";
import type { Env } from "../env";
import type { AppGrants, AppRecord, AppView, BackendStatus, ProxyTarget } from "../../kernel/contracts/app-record";
import {
  BACKEND_RESPONSE_TIMEOUT_CEILING_S,
  BACKEND_RESPONSE_TIMEOUT_DEFAULT_S,
} from "../../kernel/contracts/manifest";
import { mcpDefinition, type McpAliveAnswer, type McpServerView } from "../../kernel/contracts/mcp";
import { isAppDeclarable } from "../../kernel/rules/event-names";
import { jobFirer } from "./job-firer";
import { claimStoreIdentity } from "../store-identity";
import { applySchemaSteps, storageSchemaStore } from "../schema-steps";
import { APP_REGISTRY_SCHEMA_STEPS } from "./schema";
import { appGrants, appView } from "./app-view";
import { BackendReports } from "./backend-reports";
import { TokenEpochs } from "./token-epochs";
import { TransitionLocks } from "./transition-locks";
import { AppConfigs } from "./app-config";
import { Inboxes, type DeliveryResult } from "./inboxes";
import { JobSchedule } from "./job-schedule";
import { McpServers } from "./mcp-servers";
import { ToolPins, type OfferedTool, type PinVerdict } from "./tool-pins";
import { publishToolStamp } from "./tool-stamp";
import type { RecentCall, ToolCallRecord, ToolPolicy } from "../../kernel/contracts/mcp-tools";
import type { McpLaunchVerdict } from "./jobs-and-mcp";
import type { JobView } from "../../kernel/contracts/scheduled-jobs";
import { isolateProbe, registryEpoch } from "../change-epoch";
import type { FolderGrant } from "../../kernel/contracts/folder-grants";

/** The sender platform events come from; no app can be named so (the name pattern has no `@`). */
const PLATFORM_SENDER = "@platform";

export class AppRegistry extends DurableObject<Env> {
  private readonly records = new Map<string, AppRecord>();
  private readonly backends: BackendReports;
  private readonly tokenEpochs = new TokenEpochs();
  private readonly transitions: TransitionLocks;
  private readonly configs: AppConfigs;
  private readonly inboxes: Inboxes;
  private readonly schedule: JobSchedule;
  private readonly mcp: McpServers;
  private readonly tools: ToolPins;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const sql = ctx.storage.sql;
    this.backends = new BackendReports(sql);
    this.transitions = new TransitionLocks(sql);
    this.configs = new AppConfigs(sql);
    this.inboxes = new Inboxes(sql);
    this.schedule = new JobSchedule(ctx.storage);
    this.mcp = new McpServers(sql);
    this.tools = new ToolPins(sql);
    ctx.blockConcurrencyWhile(async () => {
      registryEpoch.bump();
      applySchemaSteps(storageSchemaStore(ctx.storage), APP_REGISTRY_SCHEMA_STEPS);
      claimStoreIdentity(sql);
      // Whatever instance came before ended: its fires in flight never got their answer.
      this.schedule.interruptLeftFires();
      for (const row of sql.exec("SELECT record FROM apps")) {
        const record = JSON.parse(String(row.record)) as AppRecord;
        this.records.set(record.name, record);
      }
      const start = sql.exec("SELECT started_at FROM gateway_start WHERE id = 1").toArray()[0];
      if (start?.started_at === env.STARTED_AT) {
        this.backends.load();
        return;
      }
      // A new gateway start: missed job fires run once (alarm); what ran under the last start is over.
      this.mcp.forgetStarts();
      await this.schedule.scheduleAlarm();
      this.transitions.clearAll();
      this.backends.beginStart(env.STARTED_AT);
    });
  }

  /** The whole store at one instant, for a backup (durable/store-export.ts). */
  async exportState(): Promise<StoreExport> {
    return exportStore(this.ctx.storage.sql);
  }

  /** True when the caller's module instance is this object's, so it sees every bump of registryEpoch. */
  async sharesIsolate(probe: string): Promise<boolean> {
    return probe === isolateProbe();
  }

  async counts(): Promise<{ installed: number; running: number | null }> {
    return { installed: this.records.size, running: this.backends.running() };
  }

  /** The host bridge has started (or skipped) every backend it will start. */
  async backendsReported(): Promise<void> {
    this.backends.markAllReported();
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
    await this.toolsChanged();
    return true;
  }

  /** Replaces a record in place (native re-sync keeps the owner's on/off state). */
  async replace(record: AppRecord): Promise<void> {
    const before = this.records.get(record.name);
    this.write(record);
    this.mcp.resetChanged(before, record);
    await this.toolsChanged();
  }

  async remove(name: string): Promise<boolean> {
    const existed = this.records.delete(name);
    registryEpoch.bump();
    this.backends.forget(name);
    this.tokenEpochs.bump(name);
    this.ctx.storage.sql.exec("DELETE FROM apps WHERE name = ?", name);
    this.inboxes.clear(name);
    this.configs.remove(name);
    this.schedule.removeOf(name);
    this.mcp.removeOf(name);
    this.tools.removeOf(name);
    await this.toolsChanged();
    return existed;
  }

  async setEnabled(name: string, enabled: boolean): Promise<AppView | null> {
    const record = this.records.get(name);
    if (!record) return null;
    this.write({ ...record, enabled });
    this.tokenEpochs.bump(name);
    await this.toolsChanged();
    return this.view(this.records.get(name)!);
  }

  /**
   * Takes the app's one transition lock (LIFE-01): a token while no other transition of the
   * app is under way, otherwise the kind of the one that is.
   */
  async beginTransition(
    name: string,
    kind: string,
    now: number,
    ttlMs: number,
  ): Promise<{ ok: true; token: string } | { ok: false; kind: string }> {
    return this.transitions.begin(name, kind, now, ttlMs);
  }

  /**
   * Releases the locks of `name` (every app when null) taken before `takenBefore`: their
   * requests went away. Answers the apps released.
   */
  async releaseTransitionsTakenBefore(name: string | null, takenBefore: number, ttlMs: number): Promise<string[]> {
    return this.transitions.releaseTakenBefore(name, takenBefore, ttlMs);
  }

  /** Releases the lock `token` holds; a lock another transition took since is left alone. */
  async endTransition(name: string, token: string): Promise<void> {
    this.transitions.end(name, token);
  }

  /** Records the owner's folder for one need, replacing an earlier one; null for an unknown app. */
  async setFolderGrant(name: string, grant: FolderGrant): Promise<FolderGrant[] | null> {
    const record = this.records.get(name);
    if (!record) return null;
    const folderGrants = [...(record.folderGrants ?? []).filter((g) => g.need !== grant.need), grant];
    this.write({ ...record, folderGrants });
    return folderGrants;
  }

  /** Forgets the folder of one need; answers the grant that was taken back, or null when there was none. */
  async revokeFolderGrant(name: string, need: string): Promise<FolderGrant | null> {
    const record = this.records.get(name);
    const revoked = record?.folderGrants?.find((g) => g.need === need);
    if (!record || !revoked) return null;
    this.write({ ...record, folderGrants: record.folderGrants!.filter((g) => g.need !== need) });
    return revoked;
  }

  async setBackend(name: string, status: BackendStatus, secret?: string): Promise<boolean> {
    if (!this.records.has(name)) return false;
    this.backends.set(name, status, secret);
    return true;
  }

  /** The owner's proxy.response_timeout_s of this start, for apps whose manifest names none. */
  private defaultResponseTimeoutS(): number {
    const configured = Number(this.env.PROXY_TIMEOUT_S);
    return Number.isInteger(configured) && configured >= 1 ? configured : BACKEND_RESPONSE_TIMEOUT_DEFAULT_S;
  }

  async proxyTarget(name: string): Promise<ProxyTarget | null> {
    const record = this.records.get(name);
    if (!record) return null;
    const backend = this.backends.status(name);
    return {
      enabled: record.enabled,
      port: backend?.running ? backend.port : null,
      slot: backend?.running ? (backend.slot ?? null) : null,
      healthy: Boolean(backend?.running && backend.healthy),
      secret: this.backends.secret(name),
      healthPath: record.manifest.backend?.healthCheck ?? "/health",
      responseTimeoutMs:
        1000 *
        Math.min(
          BACKEND_RESPONSE_TIMEOUT_CEILING_S,
          record.manifest.backend?.responseTimeoutSeconds ?? this.defaultResponseTimeoutS(),
        ),
      tokenEpoch: this.tokenEpochs.of(name),
    };
  }

  /** What the app permission gate needs of an app, or null for an unknown one. */
  async grants(name: string): Promise<AppGrants | null> {
    const record = this.records.get(name);
    return record ? appGrants(record) : null;
  }

  /** The app's own config document and its revision; null for an unknown app. */
  async config(name: string): Promise<{ config: Record<string, unknown>; revision: string } | null> {
    return this.records.has(name) ? this.configs.read(name) : null;
  }

  /** Replaces the app's config only if it is still at `basedOn`: `stale` otherwise, nothing written. */
  async replaceConfig(
    name: string,
    basedOn: string,
    config: Record<string, unknown>,
  ): Promise<{ ok: true; revision: string } | { ok: false; reason: "unknown_app" | "stale" }> {
    if (!this.records.has(name)) return { ok: false, reason: "unknown_app" };
    return this.configs.replace(name, basedOn, config);
  }

  /** Stores a message for `recipient` unless its inbox is at its quota (count or bytes). */
  async deliver(recipient: string, sender: string, body: unknown, sentAt: string): Promise<DeliveryResult> {
    if (!this.records.has(recipient)) return { ok: false, reason: "unknown_app" };
    return this.inboxes.deliver(recipient, sender, body, sentAt);
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
      const delivered = this.inboxes.deliver(record.name, PLATFORM_SENDER, { event: type, data }, sentAt);
      if (!delivered.ok) refused.push({ app: record.name, reason: delivered.detail ?? delivered.reason ?? "refused" });
    }
    return refused;
  }

  /** Returns and removes every message waiting for `recipient`. */
  async drain(recipient: string): Promise<Array<{ from: string; body: unknown; sentAt: string }>> {
    return this.inboxes.drain(recipient);
  }

  /** Makes the app's job rows match its record (CRON-01). */
  async reconcileJobs(name: string, now: number): Promise<JobView[]> {
    return this.schedule.reconcile(name, this.records.get(name), now);
  }

  /** Removes every job of the app and its history in one transaction (UNIN-02: first, before anything else is torn down). */
  async removeJobs(name: string): Promise<number> {
    const count = this.schedule.removeOf(name);
    await this.schedule.scheduleAlarm();
    return count;
  }

  /** The app's jobs with their next fire and their last fires, newest first. */
  async jobs(name: string): Promise<JobView[]> {
    return this.schedule.views(name, this.records.get(name)?.enabled === true);
  }

  /** Fires every job due at `now` (job-schedule.ts): never for a disabled app or one held by a transition. */
  async runDueJobs(now: number): Promise<number> {
    if (!this.backends.isReported) {
      // At a start the backends are not up yet: a missed fire waits for them.
      await this.schedule.scheduleAlarm(Date.now() + 5_000);
      return 0;
    }
    return this.schedule.runDue(now, {
      isEnabled: (app) => this.records.get(app)?.enabled === true,
      heldBy: (app) => this.transitions.heldBy(app, Date.now()),
      isInstalled: (app) => this.records.has(app),
      fire: async (app, request) => {
        // A fire due while the app's backend starts (spawned, its health check not answered yet:
        // an install or an enable that just returned) waits for it, within the job's timeout.
        await this.backends.whenHealthy(app, request.timeoutMs);
        return jobFirer()(this.env, (await this.proxyTarget(app))!, { app, ...request });
      },
    });
  }

  async alarm(): Promise<void> {
    await this.runDueJobs(Date.now());
  }

  /** Every server the installed apps declare, with its state and last start. */
  async mcpServers(now: number): Promise<McpServerView[]> {
    return this.mcp.views([...this.records.values()], now);
  }

  /** The owner's switch of one server; false when no installed app declares it. */
  async mcpSetEnabled(app: string, server: string, enabled: boolean): Promise<boolean> {
    if (!this.declares(app, server)) return false;
    this.mcp.setEnabled(app, server, enabled);
    return true;
  }

  /** The owner's Retry: the failed starts are forgotten, so the next launch starts it (MCP-04). */
  async mcpRetry(app: string, server: string): Promise<boolean> {
    if (!this.declares(app, server)) return false;
    this.mcp.retry(app, server);
    return true;
  }

  /** Decides whether `mcp run` may start a server now (MCP-04/05/07). */
  async mcpLaunch(app: string, server: string, definitionDigest: string, now: number): Promise<McpLaunchVerdict> {
    return this.mcp.launch(this.records.get(app), app, server, definitionDigest, now);
  }

  /** Whether a running server may go on; else why not (MCP-01). */
  async mcpAlive(
    app: string,
    server: string,
    consent: string | null,
    folders: string | null = null,
  ): Promise<McpAliveAnswer> {
    return this.mcp.alive(this.records.get(app), app, server, consent, folders);
  }

  /** Records how a start went: a failure counts towards the limit, a start that answered clears it. */
  async mcpStarted(
    app: string,
    server: string,
    report: { startId: string; ok: boolean; exitCode: number | null; reason: string | null },
    now: number,
  ): Promise<boolean> {
    return this.mcp.started(app, server, report, now);
  }

  /** Takes a run's tool listing (tool-pins.ts); false when the app, the server or the install is not the run's. */
  async toolsReport(app: string, server: string, consent: string, offered: OfferedTool[], now: number) {
    const record = this.records.get(app);
    if (!record || !this.declares(app, server)) return false;
    const taken = this.tools.report(record, server, consent, offered, now);
    await this.toolsChanged();
    return taken;
  }

  // The two reads below answer definitions whose schemas are open JSON objects, which defeat RPC's
  // type mapping of the whole stub: they are typed unknown here and stated by their one reader.
  /** The changes waiting for the owner: ToolChange[]. */
  async toolChanges(app: string, server: string): Promise<unknown> {
    return this.tools.changes(app, server);
  }

  async toolChangeAsked(app: string, server: string, tool: string, digest: string, approvalId: string) {
    this.tools.setChangeApproval(app, server, tool, digest, approvalId);
  }

  async toolChangeApproved(app: string, server: string, tool: string, digest: string): Promise<void> {
    this.tools.acceptChange(app, server, tool, digest);
    await this.toolsChanged();
  }

  /** Each declared server's tools with policy and state (ServerToolsView[]); null when no such app is installed. */
  async toolViews(app: string): Promise<unknown> {
    const record = this.records.get(app);
    return record ? this.tools.views(this.records, record) : null;
  }

  /** What a call may do; null when the run's install is not the app's current one. */
  async toolVerdict(app: string, server: string, consent: string, tool: string, digest: string) {
    const record = this.records.get(app);
    if (!record || record.consentDigest !== consent || !this.declares(app, server)) return null;
    return this.tools.verdict(this.records, record, server, tool, digest) as PinVerdict;
  }

  async toolSetPolicy(app: string, server: string, tool: string, policy: ToolPolicy): Promise<ToolPolicy | null> {
    const record = this.records.get(app);
    const before = record ? this.tools.setPolicy(record, server, tool, policy) : null;
    await this.toolsChanged();
    return before;
  }

  /** The owner's switch for logging a tool's argument values; the one it replaced, or null when there is no such tool. */
  async toolSetLogArguments(app: string, server: string, tool: string, log: boolean): Promise<boolean | null> {
    const record = this.records.get(app);
    const before = record ? this.tools.setLogArguments(record, server, tool, log) : null;
    await this.toolsChanged();
    return before;
  }

  /** Keeps the ends of calls for the recent view; answers, per call, the argument values the owner logs (or null). */
  async toolCallsRecorded(
    app: string,
    server: string,
    calls: ToolCallRecord[],
    now: number,
  ): Promise<(string | null)[]> {
    if (!this.records.has(app)) return calls.map(() => null);
    return calls.map((call) => this.tools.recordCall(app, server, call, now));
  }

  async toolRecentCalls(app: string): Promise<RecentCall[]> {
    return this.tools.recentCalls(app);
  }

  /**
   * Every method that changes what toolVerdict reads (the records, the pins, the policies)
   * ends here before it answers: `mcp run`'s kept verdicts end with the stamp (tool-stamp.ts).
   */
  private async toolsChanged(): Promise<void> {
    await publishToolStamp(this.env.TOOL_STAMP);
  }

  private declares(app: string, server: string): boolean {
    const record = this.records.get(app);
    return record !== undefined && mcpDefinition(record.manifest, server) !== null;
  }

  private write(record: AppRecord): void {
    this.records.set(record.name, record);
    registryEpoch.bump();
    this.ctx.storage.sql.exec(
      "INSERT OR REPLACE INTO apps (name, record) VALUES (?, ?)",
      record.name,
      JSON.stringify(record),
    );
  }

  private view(record: AppRecord): AppView {
    return appView(record, this.backends.status(record.name));
  }
}
