// AppRegistry: installed-app records (origin/resources/lifecycle, enabled, manifest, consent
// digest), each app's own config document (revision-guarded), the backend status and proxy
// secret the bridge reports, and app inboxes. Backend rows belong to one gateway start: they
// are stored (workerd unloads an idle object, and the proxy must still find a healthy
// backend afterwards) and cleared when a new start begins, since its backends are new.
import { claimStoreIdentity } from "../store-identity";
import { BACKEND_RESPONSE_TIMEOUT_CEILING_S, BACKEND_RESPONSE_TIMEOUT_DEFAULT_S, configGrantPaths } from "../../workers/contracts/manifest";
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../workers/env";
import type { AppGrants, AppRecord, AppView, BackendStatus, ProxyTarget } from "../../workers/contracts/app-record";
import { revisionOf } from "../../workers/contracts/revision";
import { APP_REGISTRY_SCHEMA } from "./schema";
import { INBOX_LIMITS } from "./limits";
import { isAppDeclarable } from "../../workers/contracts/event-names";

/** The sender platform events come from; no app can be named so (the name pattern has no `@`). */
const PLATFORM_SENDER = "@platform";

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
      ctx.storage.sql.exec(APP_REGISTRY_SCHEMA);
      claimStoreIdentity(ctx.storage.sql);
      for (const row of ctx.storage.sql.exec("SELECT record FROM apps")) {
        const record = JSON.parse(String(row.record)) as AppRecord;
        this.records.set(record.name, record);
      }
      const start = ctx.storage.sql.exec("SELECT started_at, backends_reported FROM gateway_start WHERE id = 1").toArray()[0];
      if (start?.started_at !== env.STARTED_AT) {
        ctx.storage.sql.exec("DELETE FROM backends");
        // A transition of an earlier start ended with it; the bridge's journals settle its files.
        ctx.storage.sql.exec("DELETE FROM transitions");
        ctx.storage.sql.exec("INSERT OR REPLACE INTO gateway_start (id, started_at, backends_reported) VALUES (1, ?, 0)", env.STARTED_AT);
        return;
      }
      this.backendsKnown = Number(start.backends_reported) === 1;
      for (const row of ctx.storage.sql.exec("SELECT name, status, secret FROM backends")) {
        this.backends.set(String(row.name), JSON.parse(String(row.status)) as BackendStatus);
        if (row.secret !== null) this.secrets.set(String(row.name), String(row.secret));
      }
    });
  }

  async counts(): Promise<{ installed: number; running: number | null }> {
    const running = [...this.backends.values()].filter((b) => b.running).length;
    return { installed: this.records.size, running: this.backendsKnown ? running : null };
  }

  /** The host bridge has started (or skipped) every backend it will start. */
  async backendsReported(): Promise<void> {
    this.backendsKnown = true;
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
    this.write(record);
  }

  async remove(name: string): Promise<boolean> {
    const existed = this.records.delete(name);
    this.forgetBackend(name);
    this.bumpTokenEpoch(name);
    this.ctx.storage.sql.exec("DELETE FROM apps WHERE name = ?", name);
    this.ctx.storage.sql.exec("DELETE FROM inbox WHERE recipient = ?", name);
    this.ctx.storage.sql.exec("DELETE FROM app_config WHERE name = ?", name);
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
  async beginTransition(name: string, kind: string, now: number, ttlMs: number): Promise<{ ok: true; token: string } | { ok: false; kind: string }> {
    const held = this.ctx.storage.sql.exec("SELECT kind, expires_at FROM transitions WHERE name = ?", name).toArray()[0];
    if (held && Number(held.expires_at) > now) return { ok: false, kind: String(held.kind) };
    const token = crypto.randomUUID();
    this.ctx.storage.sql.exec("INSERT OR REPLACE INTO transitions (name, kind, token, expires_at) VALUES (?, ?, ?, ?)", name, kind, token, now + ttlMs);
    return { ok: true, token };
  }

  /** Releases the lock `token` holds; a lock another transition took since is left alone. */
  async endTransition(name: string, token: string): Promise<void> {
    this.ctx.storage.sql.exec("DELETE FROM transitions WHERE name = ? AND token = ?", name, token);
  }

  async setBackend(name: string, status: BackendStatus, secret?: string): Promise<boolean> {
    if (!this.records.has(name)) return false;
    this.backends.set(name, status);
    if (secret !== undefined) this.secrets.set(name, secret);
    if (!status.running) this.secrets.delete(name);
    this.ctx.storage.sql.exec("INSERT OR REPLACE INTO backends (name, status, secret) VALUES (?, ?, ?)", name, JSON.stringify(status), this.secrets.get(name) ?? null);
    return true;
  }

  private forgetBackend(name: string): void {
    this.backends.delete(name);
    this.secrets.delete(name);
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
        1000 * Math.min(BACKEND_RESPONSE_TIMEOUT_CEILING_S, record.manifest.backend?.responseTimeoutSeconds ?? this.defaultResponseTimeoutS()),
      tokenEpoch: `${this.instance}:${this.tokenEpochs.get(name) ?? 0}`,
    };
  }

  /** What the app permission gate needs of an app, or null for an unknown one. */
  async grants(name: string): Promise<AppGrants | null> {
    const record = this.records.get(name);
    if (!record) return null;
    const permissions = record.manifest.permissions ?? {};
    // A grant that is not a list is no grant: iterating "*" as characters would widen it (PERM-02).
    const list = (value: unknown) => (Array.isArray(value) && value.every((item) => typeof item === "string") ? [...value] : null);
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
  async replaceConfig(name: string, basedOn: string, config: Record<string, unknown>): Promise<{ ok: true; revision: string } | { ok: false; reason: "unknown_app" | "stale" }> {
    const current = await this.config(name);
    if (!current) return { ok: false, reason: "unknown_app" };
    if (current.revision !== basedOn) return { ok: false, reason: "stale" };
    this.ctx.storage.sql.exec("INSERT OR REPLACE INTO app_config (name, config) VALUES (?, ?)", name, JSON.stringify(config));
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
      .exec("SELECT COUNT(*) AS messages, COALESCE(SUM(LENGTH(CAST(body AS BLOB))), 0) AS bytes FROM inbox WHERE recipient = ?", recipient)
      .toArray()[0]!;
    if (Number(held.messages) + 1 > INBOX_LIMITS.messages) return { ok: false, reason: "full", detail: `${INBOX_LIMITS.messages} messages` };
    if (Number(held.bytes) + bytes > INBOX_LIMITS.bytes) return { ok: false, reason: "full", detail: `${INBOX_LIMITS.bytes} bytes` };
    this.ctx.storage.sql.exec("INSERT INTO inbox (recipient, sender, body, sent_at) VALUES (?, ?, ?, ?)", recipient, sender, text, sentAt);
    return { ok: true };
  }

  /**
   * EVT-01/02: a platform event lands in the inbox of every enabled app whose
   * `eventSubscriptions` lists its exact name, from the sender `@platform`, identifiers only.
   * Answers the apps it could not be delivered to, and why (their inbox is at its quota).
   */
  async deliverPlatformEvent(type: string, data: Record<string, string | number | boolean | null>, sentAt: string): Promise<Array<{ app: string; reason: string }>> {
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
    const rows = this.ctx.storage.sql.exec("SELECT id, sender, body, sent_at FROM inbox WHERE recipient = ? ORDER BY id", recipient).toArray();
    this.ctx.storage.sql.exec("DELETE FROM inbox WHERE recipient = ?", recipient);
    return rows.map((row) => ({ from: String(row.sender), body: JSON.parse(String(row.body)), sentAt: String(row.sent_at) }));
  }

  private write(record: AppRecord): void {
    this.records.set(record.name, record);
    this.ctx.storage.sql.exec("INSERT OR REPLACE INTO apps (name, record) VALUES (?, ?)", record.name, JSON.stringify(record));
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
      backend: manifest.backend ? this.backends.get(record.name) ?? null : null,
    };
  }
}
