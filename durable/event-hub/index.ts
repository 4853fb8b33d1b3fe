// EventHub: the one fan-out of live platform events (WS-01..14). It holds every /api/ws socket
// with WebSocket hibernation (the socket survives the object being evicted; its scope rides in
// the socket's attachment), and every frame to every socket passes the one filter
// (event-scope.ts). The worker authorizes the upgrade; this object is reachable only from it.
import { appRegistry } from "../instances";
import { DurableObject } from "cloudflare:workers";
import { exportStore } from "../store-export";
import type { StoreExport } from "../../kernel/contracts/durability";
import type { Env } from "../env";
import { EVENTS_SUBPROTOCOL, HUB_CLOSE, isAppDeclarable, type EventFrame } from "../../kernel/rules/event-names";
import { recordAudit } from "../security-log/audit";
import { claimStoreIdentity } from "../store-identity";
import { FIRST_WINDOW_MS } from "../security-log/refusal-windows";
import {
  HUB_PROTOCOL_HEADER,
  HUB_SCOPE_HEADER,
  MAX_SOCKETS_PER_APP,
  connectGrant,
  frameVerdict,
  type CurrentDeclaration,
  type SocketScope,
} from "./event-scope";

/** Frames after which an app's current declaration is read again (its manifest or state changed). */
const DECLARATION_CHANGES = new Set(["app.installed", "app.updated", "app.enabled", "app.disabled", "app.uninstalled"]);
/** Frames after which the app's sockets are closed at once (C-22, WS-08). */
const REVOKING = new Set(["app.disabled", "app.uninstalled"]);

export interface PublishResult {
  delivered: number;
  withheld: number;
}

/** Holds the owner's and apps' sockets; `publish` is the one way a frame reaches any of them. */
export class EventHub extends DurableObject<Env> {
  /** Scopes of live sockets, read from their attachments once after a wake. */
  private scopes = new WeakMap<WebSocket, SocketScope>();
  /** Each app's current declaration, read from AppRegistry on first need and after its lifecycle frames. */
  private declarations = new Map<string, CurrentDeclaration | null>();
  /** Grant rows already written, `app|event` -> until (ms): one row per app and event per window. */
  private grantsAudited = new Map<string, number>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => claimStoreIdentity(ctx.storage.sql));
  }

  /** The whole store at one instant, for a backup (durable/store-export.ts). */
  async exportState(): Promise<StoreExport> {
    return exportStore(this.ctx.storage.sql);
  }

  /** The worker's authorized upgrade: registers the socket with the scope the worker computed. */
  async fetch(request: Request): Promise<Response> {
    const scope = JSON.parse(request.headers.get(HUB_SCOPE_HEADER) ?? "null") as SocketScope | null;
    if (scope === null || request.headers.get("upgrade")?.toLowerCase() !== "websocket")
      return new Response(null, { status: 400 });
    if (scope.app !== null) {
      // Checked again here, where the socket would be registered: a disabled app is refused before it is (WS-09).
      const current = await this.readDeclaration(scope.app);
      if (current !== null && !current.enabled) {
        await this.auditDecision(scope.app, "(connect)", "refused", "app_not_enabled");
        return new Response(null, { status: 403 });
      }
      // An app that opens socket after socket would make every fan-out longer for everyone.
      if (this.ctx.getWebSockets(`app:${scope.app}`).length >= MAX_SOCKETS_PER_APP) {
        await this.auditDecision(scope.app, "(connect)", "refused", "too_many_sockets");
        return new Response(null, { status: 429 });
      }
      // The declaration read here, where the socket is registered, is its connect-time snapshot.
      const { granted, refused } = connectGrant(current === null ? [] : current.events);
      scope.granted = granted;
      for (const event of granted) await this.auditDecision(scope.app, event, "allowed", "declared");
      for (const { event, reason } of refused) await this.auditDecision(scope.app, event, "refused", reason);
    }
    const pair = new WebSocketPair();
    const [client, server] = [pair[0], pair[1]];
    const tags =
      scope.app !== null
        ? [`app:${scope.app}`]
        : scope.session !== null
          ? ["owner", `session:${scope.session}`]
          : ["owner"];
    this.ctx.acceptWebSocket(server, tags);
    server.serializeAttachment(scope);
    this.scopes.set(server, scope);
    server.send(
      JSON.stringify({
        type: "hub.hello",
        data: { principal: scope.principal, events: scope.app === null ? "*" : scope.granted.join(",") },
      } satisfies EventFrame),
    );
    const headers =
      request.headers.get(HUB_PROTOCOL_HEADER) === "1" ? { "Sec-WebSocket-Protocol": EVENTS_SUBPROTOCOL } : undefined;
    return new Response(null, { status: 101, webSocket: client, headers });
  }

  /** Sends one frame to every socket its scope admits; lifecycle frames refresh and revoke first. */
  async publish(frame: EventFrame): Promise<PublishResult> {
    const app = typeof frame.data.app === "string" ? frame.data.app : null;
    if (app !== null && DECLARATION_CHANGES.has(frame.type)) this.declarations.delete(app);
    if (app !== null && REVOKING.has(frame.type)) this.closeApp(app);
    const result = await this.fanOut(frame);
    // A signed-out session's sockets hear its sign-out, then close; "*" (the key was replaced) is every owner socket.
    if (frame.type === "session.signed_out" && typeof frame.data.session === "string") {
      this.closeTagged(frame.data.session === "*" ? "owner" : `session:${frame.data.session}`, "session_ended");
    }
    if (isAppDeclarable(frame.type)) await this.deliverToInboxes(frame);
    return result;
  }

  /** Closes every socket of `app` (disable, uninstall, revoked tokens). */
  async revokeApp(app: string): Promise<number> {
    this.declarations.delete(app);
    return this.closeApp(app);
  }

  // Clients have nothing to say: a frame from one is ignored (scope is fixed at connect, never widened by asking).
  async webSocketMessage(): Promise<void> {}

  async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    // Before compatibility date 2026-04-07 the runtime does not answer a client's close frame itself.
    try {
      ws.close(code === 1005 || code === 1006 ? 1000 : code, reason);
    } catch {
      // already closed
    }
  }

  private closeApp(app: string): number {
    return this.closeTagged(`app:${app}`, "app_not_enabled");
  }

  private closeTagged(tag: string, reason: string): number {
    const sockets = this.ctx.getWebSockets(tag);
    for (const ws of sockets) {
      try {
        ws.close(HUB_CLOSE.revoked, reason);
      } catch {
        // already closed
      }
    }
    return sockets.length;
  }

  private scopeOf(ws: WebSocket): SocketScope {
    let scope = this.scopes.get(ws);
    if (scope === undefined) {
      scope = ws.deserializeAttachment() as SocketScope;
      this.scopes.set(ws, scope);
    }
    return scope;
  }

  private async fanOut(frame: EventFrame): Promise<PublishResult> {
    const text = JSON.stringify({ type: frame.type, data: frame.data });
    let delivered = 0;
    let withheld = 0;
    for (const ws of this.ctx.getWebSockets()) {
      const scope = this.scopeOf(ws);
      const current = scope.app === null ? null : await this.currentOf(scope as SocketScope & { app: string });
      const verdict = frameVerdict(scope, current, frame);
      if (!verdict.deliver) {
        withheld++;
        // Only a name the app asked for and lost is a refusal to record; one it never declared is not an ask.
        if (verdict.reason === "narrowed" && scope.app !== null)
          await this.auditDecision(scope.app, frame.type, "refused", "narrowed");
        continue;
      }
      try {
        ws.send(text);
        delivered++;
      } catch {
        withheld++;
      }
    }
    return { delivered, withheld };
  }

  /** The app's declaration now; when AppRegistry cannot be read, the socket keeps its connect-time grant (WS-07). */
  private async currentOf(scope: SocketScope & { app: string }): Promise<CurrentDeclaration | null> {
    if (this.declarations.has(scope.app)) return this.declarations.get(scope.app)!;
    try {
      return await this.readDeclaration(scope.app);
    } catch (error) {
      console.error(
        "event_hub_declaration_unreadable",
        scope.app,
        error instanceof Error ? error.message : String(error),
      );
      return { enabled: true, events: scope.granted };
    }
  }

  private async readDeclaration(app: string): Promise<CurrentDeclaration | null> {
    const grants = await appRegistry(this.env).grants(app);
    const current = grants === null ? null : { enabled: grants.enabled, events: grants.events ?? [] };
    this.declarations.set(app, current);
    return current;
  }

  /** EVT-01/02: the frame lands, identifiers only, in the inbox of every enabled app whose eventSubscriptions names it. */
  private async deliverToInboxes(frame: EventFrame): Promise<void> {
    const refused = await appRegistry(this.env).deliverPlatformEvent(frame.type, frame.data, new Date().toISOString());
    for (const { app, reason } of refused) await this.auditUndelivered(app, frame.type, reason);
  }

  /**
   * EVT-05: an event an app's inbox could not take (at its quota) is a security-log row, never
   * only a line. An app that never drains its inbox makes one per event it subscribed to, at
   * the rate events come, so it is a refusal the log counts per app, event and reason
   * (refusal-windows.ts): one row, then a count.
   */
  private async auditUndelivered(app: string, event: string, reason: string): Promise<void> {
    try {
      const appended = await recordAudit(this.env, {
        kind: "event_not_delivered",
        outcome: "refused",
        principal: `app:${app}`,
        subject: event,
        detail: { to: "inbox", reason },
        group: `inbox ${event} ${reason}`,
      });
      if (!appended.counted) await this.fanOut({ type: "security_log.appended", data: { seq: appended.seq } });
    } catch (error) {
      // The log itself could not be reached: the line is all that is left to say it.
      console.error(
        "event_inbox_delivery_refused",
        event,
        app,
        reason,
        error instanceof Error ? error.message : String(error),
      );
    }
  }

  /**
   * The one path every scope decision is recorded through (WS-10), one row per app, event and
   * reason in a five-minute window: refusals are counted by the security log's refusal windows
   * (grouped by event and reason); grants, which the log does not count, are kept here.
   */
  private async auditDecision(
    app: string,
    event: string,
    outcome: "allowed" | "refused",
    reason: string,
  ): Promise<void> {
    const now = Date.now();
    if (outcome === "allowed") {
      const key = `${app}|${event}`;
      if ((this.grantsAudited.get(key) ?? 0) > now) return;
      this.grantsAudited.set(key, now + FIRST_WINDOW_MS);
    }
    const kind = outcome === "allowed" ? "events.granted" : "events.refused";
    try {
      const appended = await recordAudit(this.env, {
        kind,
        outcome,
        principal: `app:${app}`,
        subject: event,
        detail: { reason },
        group: `ws ${event} ${reason}`,
      });
      if (!appended.counted) await this.fanOut({ type: "security_log.appended", data: { seq: appended.seq } });
    } catch (error) {
      console.error("event_hub_audit_failed", kind, app, event, error instanceof Error ? error.message : String(error));
    }
  }
}
