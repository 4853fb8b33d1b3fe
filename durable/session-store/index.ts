// SessionStore: sessions, sign-in links, app tokens and the signing key (AUTH-*, APPID-*).
// Checking a credential reads memory only; "last used" is coalesced and written at most
// once a minute per session, so the request path never pays a storage write.
import { claimStoreIdentity } from "../store-identity";
import { isolateProbe, sessionsEpoch } from "../change-epoch";
import { storageFullReason } from "../../kernel/contracts/storage-full";
import { DurableObject } from "cloudflare:workers";
import { exportStore } from "../store-export";
import type { StoreExport } from "../../kernel/contracts/durability";
import type { Env } from "../env";
import { hexOf, sha256Hex } from "../../kernel/crypto/hex";
import {
  APP_TOKEN_TTL_MS,
  BROWSER_SESSION_TTL_MS,
  MAX_TTL_MS,
  LINK_OPEN_WINDOW_MS,
  SESSION_LIMITS,
  type CheckResult,
  type LinkResult,
  type MintedToken,
  type RefusalReason,
  type SessionKind,
  type SessionView,
} from "../../kernel/contracts/session";
import { applySchemaSteps, storageSchemaStore } from "../schema-steps";
import { SESSION_SCHEMA_STEPS } from "./schema";

// The first address is the bound address: where a link was first opened, where a browser signed in.
interface SessionRow extends Omit<SessionView, "firstAddress"> {
  secretHash: string;
  /** sha256 of `id.secret`, kept when the session ends so only its secret learns why (null before it was kept). */
  secretSha256: string | null;
  openUntil: number | null;
  boundAddress: string | null;
  openedAt: number | null;
  persistedLastUsedAt: number;
}

const ENDED_MEMORY_MS = 7 * 24 * 3600 * 1000;
const USER_AGENT_MAX_CHARS = 512;
const LAST_USED_FLUSH_MS = 60_000;
const encoder = new TextEncoder();

function randomPart(bytes: number): string {
  const raw = crypto.getRandomValues(new Uint8Array(bytes));
  return btoa(String.fromCharCode(...raw))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

export class SessionStore extends DurableObject<Env> {
  private sessions = new Map<string, SessionRow>();
  private ended = new Map<string, { reason: RefusalReason; at: number; secretSha256: string | null }>();
  private key!: CryptoKey;
  private appTokens = new Map<string, { token: string; expiresAt: number; id: string }>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.blockConcurrencyWhile(async () => {
      applySchemaSteps(storageSchemaStore(ctx.storage), SESSION_SCHEMA_STEPS);
      claimStoreIdentity(ctx.storage.sql);
      await this.loadKey();
      for (const row of ctx.storage.sql.exec("SELECT * FROM sessions")) {
        const session = fromRow(row);
        this.sessions.set(session.id, session);
      }
      for (const row of ctx.storage.sql.exec("SELECT id, reason, at, secret_sha256 FROM ended_sessions")) {
        this.ended.set(String(row.id), {
          reason: row.reason as RefusalReason,
          at: Number(row.at),
          secretSha256: row.secret_sha256 === null ? null : String(row.secret_sha256),
        });
      }
      sessionsEpoch.bump();
    });
  }

  /** True when the caller's module instance is this object's, so it sees every bump of sessionsEpoch. */
  async sharesIsolate(probe: string): Promise<boolean> {
    return probe === isolateProbe();
  }

  /** The whole store at one instant, for a backup (durable/store-export.ts). */
  async exportState(): Promise<StoreExport> {
    return exportStore(this.ctx.storage.sql);
  }

  private async loadKey(): Promise<void> {
    let row = this.ctx.storage.sql.exec("SELECT key_hex FROM signing_key WHERE id = 1").toArray()[0];
    if (!row) {
      const keyHex = hexOf(crypto.getRandomValues(new Uint8Array(32)));
      this.ctx.storage.sql.exec(
        "INSERT INTO signing_key (id, key_hex, generation, created_at) VALUES (1, ?, 1, ?)",
        keyHex,
        Date.now(),
      );
      row = { key_hex: keyHex };
    }
    const raw = new Uint8Array(
      String(row.key_hex)
        .match(/../g)!
        .map((pair) => parseInt(pair, 16)),
    );
    this.key = await crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  }

  private async hashSecret(id: string, secret: string): Promise<string> {
    return hexOf(new Uint8Array(await crypto.subtle.sign("HMAC", this.key, encoder.encode(`${id}.${secret}`))));
  }

  /** Mints a session of `kind` and returns its token once; the limit of its kind evicts the least recently used. */
  private async mint(
    kind: SessionKind,
    opts: {
      issuer: string;
      ttlMs: number;
      now: number;
      app?: string;
      openWithinMs?: number;
      address?: string;
      userAgent?: string | null;
    },
  ) {
    const id = randomPart(12);
    const secret = randomPart(32);
    const expiresAt = opts.now + opts.ttlMs;
    const session: SessionRow = {
      id,
      kind,
      app: opts.app ?? null,
      issuer: opts.issuer,
      createdAt: opts.now,
      lastUsedAt: opts.now,
      persistedLastUsedAt: opts.now,
      expiresAt,
      signedInAt: opts.now,
      secretHash: await this.hashSecret(id, secret),
      secretSha256: await sha256Hex(encoder.encode(`${id}.${secret}`)),
      openUntil: opts.openWithinMs === undefined ? null : Math.min(expiresAt, opts.now + opts.openWithinMs),
      boundAddress: opts.address ?? null,
      openedAt: null,
      name: null,
      userAgent: opts.userAgent ?? null,
    };
    const evicted = this.evictBeyondLimit(kind, opts.app ?? null, opts.now);
    this.sessions.set(id, session);
    sessionsEpoch.bump();
    this.ctx.storage.sql.exec(
      `INSERT INTO sessions (id, kind, app, issuer, secret_hash, created_at, last_used_at, expires_at, signed_in_at, open_until, bound_address, opened_at, name, user_agent, secret_sha256)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?, ?)`,
      id,
      kind,
      session.app,
      session.issuer,
      session.secretHash,
      opts.now,
      opts.now,
      expiresAt,
      opts.now,
      session.openUntil,
      session.boundAddress,
      session.userAgent,
      session.secretSha256,
    );
    return { token: `${id}.${secret}`, session, evicted };
  }

  // Per kind (and per app for app tokens) the session past the limit signs out the least
  // recently used of the same kind; a token minted never evicts a browser session.
  private evictBeyondLimit(kind: SessionKind, app: string | null, now: number): SessionView[] {
    const limit = SESSION_LIMITS[kind];
    const same = [...this.sessions.values()].filter(
      (s) => s.kind === kind && s.app === app && countsAgainstLimit(s, now),
    );
    const evicted: SessionView[] = [];
    same.sort((a, b) => a.lastUsedAt - b.lastUsedAt);
    while (same.length >= limit) {
      const oldest = same.shift()!;
      this.end(oldest.id, "limit", now);
      evicted.push(view(oldest));
    }
    return evicted;
  }

  private end(id: string, reason: RefusalReason, now: number): void {
    const secretSha256 = this.sessions.get(id)?.secretSha256 ?? null;
    this.sessions.delete(id);
    sessionsEpoch.bump();
    this.ended.set(id, { reason, at: now, secretSha256 });
    this.ctx.storage.sql.exec("DELETE FROM sessions WHERE id = ?", id);
    this.ctx.storage.sql.exec(
      "INSERT OR REPLACE INTO ended_sessions (id, reason, at, secret_sha256) VALUES (?, ?, ?, ?)",
      id,
      reason,
      now,
      secretSha256,
    );
  }

  private async lookup(
    token: string,
    now: number,
  ): Promise<{ ok: true; session: SessionRow } | { ok: false; reason: RefusalReason; at: number | null }> {
    const dot = token.indexOf(".");
    if (dot <= 0 || token.length > 200) return { ok: false, reason: "not_signed_in", at: null };
    const id = token.slice(0, dot);
    const session = this.sessions.get(id);
    if (!session) {
      const ended = this.ended.get(id);
      // AUTH-17: an unproven claim to an ended id reads as no credential; only the secret that
      // session held learns why it ended (a row kept without its sha256 tells nobody).
      if (!ended || ended.secretSha256 === null || !(await provesEndedSecret(token, ended.secretSha256)))
        return { ok: false, reason: "not_signed_in", at: null };
      if (now - ended.at > ENDED_MEMORY_MS) return { ok: false, reason: "ended", at: ended.at };
      return { ok: false, reason: ended.reason, at: ended.at };
    }
    const presented = await this.hashSecret(id, token.slice(dot + 1));
    if (!crypto.subtle.timingSafeEqual(encoder.encode(presented), encoder.encode(session.secretHash))) {
      return { ok: false, reason: "not_signed_in", at: null };
    }
    if (session.expiresAt <= now) {
      this.end(id, "expired", now);
      return { ok: false, reason: "expired", at: session.expiresAt };
    }
    return { ok: true, session };
  }

  private touch(session: SessionRow, now: number): void {
    session.lastUsedAt = now;
    sessionsEpoch.bump();
    if (now - session.persistedLastUsedAt >= LAST_USED_FLUSH_MS) {
      // Last use is bookkeeping: a full disk must not turn every signed-in read into a failure.
      // The time stays in memory and is written at a later use once space returns.
      try {
        this.ctx.storage.sql.exec("UPDATE sessions SET last_used_at = ? WHERE id = ?", now, session.id);
        session.persistedLastUsedAt = now;
      } catch (error) {
        if (storageFullReason(error) === null) throw error;
      }
    }
  }

  /** Checks a token presented as cookie or Bearer. Memory only, except a coalesced last-used write. */
  async check(token: string, now: number): Promise<CheckResult> {
    const found = await this.lookup(token, now);
    if (!found.ok) return found;
    this.touch(found.session, now);
    return { ok: true, session: view(found.session) };
  }

  /**
   * Opens a `?token=` link: binds it to the first address, creates a browser session lasting
   * `browserTtlMs` (auth.session_ttl, capped at 90 days) that remembers the address and User-Agent.
   */
  async openLink(
    token: string,
    address: string,
    now: number,
    browserTtlMs: number = BROWSER_SESSION_TTL_MS,
    userAgent: string | null = null,
  ): Promise<LinkResult & { evicted?: SessionView[] }> {
    const found = await this.lookup(token, now);
    if (!found.ok) return found;
    const link = found.session;
    if (link.kind !== "token") return { ok: false, reason: "not_signed_in", at: null };
    if (link.openUntil !== null && now > link.openUntil)
      return { ok: false, reason: "link_expired", at: link.openUntil };
    if (link.boundAddress !== null && link.boundAddress !== address)
      return { ok: false, reason: "link_used", at: link.openedAt };
    if (link.boundAddress === null) {
      link.boundAddress = address;
      link.openedAt = now;
      sessionsEpoch.bump();
      this.ctx.storage.sql.exec(
        "UPDATE sessions SET bound_address = ?, opened_at = ? WHERE id = ?",
        address,
        now,
        link.id,
      );
    }
    this.touch(link, now);
    const ttl = Math.min(browserTtlMs, MAX_TTL_MS, link.expiresAt - now);
    const browser = await this.mint("browser", {
      issuer: `link:${link.issuer}`,
      ttlMs: ttl,
      now,
      address,
      userAgent: userAgent === null ? null : userAgent.slice(0, USER_AGENT_MAX_CHARS),
    });
    return { ok: true, browserToken: browser.token, session: view(browser.session), evicted: browser.evicted };
  }

  /** Mints an owner token (CLI, /api/token/local, startup link); the link may be opened within 24 h. */
  async mintToken(
    issuer: string,
    ttlMs: number,
    now: number,
  ): Promise<MintedToken & { evicted: SessionView[]; superseded: SessionView[] }> {
    const superseded: SessionView[] = [];
    if (issuer === "startup") {
      for (const s of [...this.sessions.values()]) {
        if (s.kind === "token" && s.issuer === "startup" && s.openedAt === null) {
          this.end(s.id, "superseded", now);
          superseded.push(view(s));
        }
      }
    }
    const minted = await this.mint("token", { issuer, ttlMs, now, openWithinMs: LINK_OPEN_WINDOW_MS });
    return {
      token: minted.token,
      session: view(minted.session),
      openWithin: minted.session.openUntil! - now,
      evicted: minted.evicted,
      superseded,
    };
  }

  /** The app's token, reused while more than half of its hour is left (APPID-01/02). */
  async appToken(app: string, now: number): Promise<{ token: string; expiresAt: number; evicted: SessionView[] }> {
    const cached = this.appTokens.get(app);
    if (cached && cached.expiresAt - now > APP_TOKEN_TTL_MS / 2 && this.sessions.has(cached.id)) {
      return { token: cached.token, expiresAt: cached.expiresAt, evicted: [] };
    }
    const minted = await this.mint("app", { issuer: "app", ttlMs: APP_TOKEN_TTL_MS, now, app });
    this.appTokens.set(app, { token: minted.token, expiresAt: minted.session.expiresAt, id: minted.session.id });
    return { token: minted.token, expiresAt: minted.session.expiresAt, evicted: minted.evicted };
  }

  /** Ends every token of an app (disable or removal). */
  async revokeApp(app: string, now: number): Promise<number> {
    this.appTokens.delete(app);
    const mine = [...this.sessions.values()].filter((s) => s.kind === "app" && s.app === app);
    for (const s of mine) this.end(s.id, "signed_out", now);
    return mine.length;
  }

  /** Names (or, with null, unnames) one owner sign-in; null when no live one has that id. */
  async rename(id: string, name: string | null, now: number): Promise<SessionView | null> {
    const session = this.sessions.get(id);
    if (!session || session.kind === "app" || session.expiresAt <= now) return null;
    session.name = name;
    sessionsEpoch.bump();
    this.ctx.storage.sql.exec("UPDATE sessions SET name = ? WHERE id = ?", name, id);
    return view(session);
  }

  /** Every sign-in, newest first; never a secret. */
  async list(now: number): Promise<SessionView[]> {
    return [...this.sessions.values()]
      .filter((s) => s.expiresAt > now)
      .map(view)
      .sort((a, b) => b.createdAt - a.createdAt);
  }

  /** Signs out one session; `others`/`everywhere` relative to `currentId`. */
  async signOut(
    scope: "this" | "one" | "others" | "everywhere",
    currentId: string | null,
    targetId: string | null,
    now: number,
  ): Promise<SessionView[]> {
    const targets: Array<[SessionRow, RefusalReason]> = [];
    for (const s of this.sessions.values()) {
      if (s.kind === "app") continue;
      if (scope === "this" && s.id === currentId) targets.push([s, "signed_out"]);
      if (scope === "one" && s.id === targetId) targets.push([s, "signed_out_elsewhere"]);
      if (scope === "others" && s.id !== currentId) targets.push([s, "signed_out_others"]);
      if (scope === "everywhere") targets.push([s, "signed_out_everywhere"]);
    }
    for (const [s, reason] of targets) this.end(s.id, reason, now);
    return targets.map(([s]) => view(s));
  }

  /** Replaces the signing key and ends every session with reason `key_replaced`. */
  async rotateKey(now: number): Promise<number> {
    const all = [...this.sessions.values()];
    for (const s of all) this.end(s.id, "key_replaced", now);
    this.appTokens.clear();
    const keyHex = hexOf(crypto.getRandomValues(new Uint8Array(32)));
    this.ctx.storage.sql.exec(
      "UPDATE signing_key SET key_hex = ?, generation = generation + 1, created_at = ? WHERE id = 1",
      keyHex,
      now,
    );
    await this.loadKey();
    return all.length;
  }
}

function countsAgainstLimit(session: SessionRow, now: number): boolean {
  if (session.expiresAt <= now) return false;
  // "20 tokens no browser has opened": an opened link no longer counts against the token limit.
  return session.kind !== "token" || session.openedAt === null;
}

function view(session: SessionRow): SessionView {
  return {
    id: session.id,
    kind: session.kind,
    app: session.app,
    issuer: session.issuer,
    createdAt: session.createdAt,
    lastUsedAt: session.lastUsedAt,
    expiresAt: session.expiresAt,
    signedInAt: session.signedInAt,
    name: session.name,
    userAgent: session.userAgent,
    firstAddress: session.boundAddress,
  };
}

function fromRow(row: Record<string, SqlStorageValue>): SessionRow {
  const lastUsed = Number(row.last_used_at);
  return {
    id: String(row.id),
    kind: row.kind as SessionKind,
    app: row.app === null ? null : String(row.app),
    issuer: String(row.issuer),
    createdAt: Number(row.created_at),
    lastUsedAt: lastUsed,
    persistedLastUsedAt: lastUsed,
    expiresAt: Number(row.expires_at),
    signedInAt: Number(row.signed_in_at),
    secretHash: String(row.secret_hash),
    secretSha256: row.secret_sha256 === null || row.secret_sha256 === undefined ? null : String(row.secret_sha256),
    openUntil: row.open_until === null ? null : Number(row.open_until),
    boundAddress: row.bound_address === null ? null : String(row.bound_address),
    openedAt: row.opened_at === null ? null : Number(row.opened_at),
    name: row.name === null || row.name === undefined ? null : String(row.name),
    userAgent: row.user_agent === null || row.user_agent === undefined ? null : String(row.user_agent),
  };
}

/** True when the token's `id.secret` is the one whose sha256 an ended session kept (compared in constant time). */
async function provesEndedSecret(token: string, kept: string): Promise<boolean> {
  const presented = encoder.encode(await sha256Hex(encoder.encode(token)));
  const stored = encoder.encode(kept);
  return presented.length === stored.length && crypto.subtle.timingSafeEqual(presented, stored);
}
