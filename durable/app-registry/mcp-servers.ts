// The MCP servers installed apps register: the owner's switch of each, its failed starts and
// last start, and the one start under way (MCP-01/04/05/07). What a server is comes from the
// record's manifest; only its state lives here.
import type { AppRecord } from "../../kernel/contracts/app-record";
import {
  MCP_FAILED_STARTS_LIMIT,
  MCP_FIRST_START_MS,
  mcpDefinition,
  mcpDefinitionDigest,
  mcpKey,
  type McpAliveAnswer,
  type McpServerView,
  type McpStart,
} from "../../kernel/contracts/mcp";
import { appNetworkGrant } from "../../kernel/rules/network-grant";
import type { McpLaunchVerdict } from "./jobs-and-mcp";
import { effectiveGrants, folderGrantsStamp, type FolderGrant } from "../../kernel/contracts/folder-grants";

/** The grants a start of the app's children applies: the record's, for the needs its manifest still declares. */
function appFolders(record: AppRecord): FolderGrant[] {
  return effectiveGrants(record.manifest.permissions?.folders, record.folderGrants);
}

interface McpRow {
  ownerEnabled: boolean;
  failedStarts: number;
  lastStart: McpStart | null;
  startingId: string | null;
  startingSince: number | null;
}

export class McpServers {
  constructor(private readonly sql: SqlStorage) {}

  private row(key: string): McpRow | null {
    const row = this.sql
      .exec(
        "SELECT owner_enabled, failed_starts, last_start, starting_id, starting_since FROM mcp_servers WHERE key = ?",
        key,
      )
      .toArray()[0];
    if (!row) return null;
    return {
      ownerEnabled: Number(row.owner_enabled) === 1,
      failedStarts: Number(row.failed_starts),
      lastStart: row.last_start === null ? null : (JSON.parse(String(row.last_start)) as McpStart),
      startingId: row.starting_id === null ? null : String(row.starting_id),
      startingSince: row.starting_since === null ? null : Number(row.starting_since),
    };
  }

  private ensureRow(app: string, key: string): McpRow {
    this.sql.exec(
      "INSERT OR IGNORE INTO mcp_servers (key, app, owner_enabled, failed_starts) VALUES (?, ?, 1, 0)",
      key,
      app,
    );
    return this.row(key)!;
  }

  private isStarting(row: McpRow | null, now: number): boolean {
    return (
      row?.startingSince !== null && row?.startingSince !== undefined && now - row.startingSince < MCP_FIRST_START_MS
    );
  }

  /** A start of an earlier gateway's server is over. */
  forgetStarts(): void {
    this.sql.exec("UPDATE mcp_servers SET starting_id = NULL, starting_since = NULL");
  }

  /** A changed definition starts afresh (MCP-04): its failures were another server's. */
  resetChanged(before: AppRecord | undefined, record: AppRecord): void {
    for (const server of Object.keys(record.manifest.mcpServers ?? {})) {
      const was = before ? mcpDefinition(before.manifest, server) : null;
      const now = mcpDefinition(record.manifest, server);
      if (JSON.stringify(was) !== JSON.stringify(now))
        this.sql.exec("UPDATE mcp_servers SET failed_starts = 0 WHERE key = ?", mcpKey(record.name, server));
    }
  }

  removeOf(app: string): void {
    this.sql.exec("DELETE FROM mcp_servers WHERE app = ?", app);
  }

  /** Every server `records` declare, with its state and last start. */
  async views(records: AppRecord[], now: number): Promise<McpServerView[]> {
    const out: McpServerView[] = [];
    for (const record of [...records].sort((a, b) => a.name.localeCompare(b.name))) {
      for (const server of Object.keys(record.manifest.mcpServers ?? {}).sort()) {
        const key = mcpKey(record.name, server);
        const definition = mcpDefinition(record.manifest, server)!;
        const row = this.row(key);
        const ownerEnabled = row?.ownerEnabled ?? true;
        const failedStarts = row?.failedStarts ?? 0;
        const state: McpServerView["state"] = !record.enabled
          ? "app_disabled"
          : !ownerEnabled
            ? "off"
            : failedStarts >= MCP_FAILED_STARTS_LIMIT
              ? "failing"
              : this.isStarting(row, now)
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
          lastStart: row?.lastStart ?? null,
          definitionDigest: await mcpDefinitionDigest(definition),
        });
      }
    }
    return out;
  }

  setEnabled(app: string, server: string, enabled: boolean): void {
    const key = mcpKey(app, server);
    this.ensureRow(app, key);
    this.sql.exec("UPDATE mcp_servers SET owner_enabled = ? WHERE key = ?", enabled ? 1 : 0, key);
  }

  /** The owner's Retry: the failed starts are forgotten, so the next launch starts it (MCP-04). */
  retry(app: string, server: string): void {
    const key = mcpKey(app, server);
    this.ensureRow(app, key);
    this.sql.exec("UPDATE mcp_servers SET failed_starts = 0 WHERE key = ?", key);
  }

  /**
   * Whether `mcp run` may start a server now: installed, enabled, on, not failing, no other
   * start under way, and the definition found on disk is the one the owner consented to. An
   * allowed start is marked as under way until its outcome is reported.
   */
  async launch(
    record: AppRecord | undefined,
    app: string,
    server: string,
    definitionDigest: string,
    now: number,
  ): Promise<McpLaunchVerdict> {
    const key = mcpKey(app, server);
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
    const row = this.ensureRow(app, key);
    if (!row.ownerEnabled) return { ok: false, code: "mcp_server_off", vars: { key } };
    if (row.failedStarts >= MCP_FAILED_STARTS_LIMIT)
      return { ok: false, code: "mcp_server_failing", vars: { key, count: row.failedStarts, app, server } };
    if (this.isStarting(row, now)) return { ok: false, code: "mcp_server_starting", vars: { key } };
    const startId = crypto.randomUUID();
    this.sql.exec("UPDATE mcp_servers SET starting_id = ?, starting_since = ? WHERE key = ?", startId, now, key);
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
        network: appNetworkGrant(record.manifest),
        startId,
        consentDigest: record.consentDigest,
        folders: appFolders(record),
        foldersStamp: folderGrantsStamp(appFolders(record)),
      },
    };
  }

  /**
   * Whether a running server may go on: its app still installed and enabled, as the install it
   * was started for (`consent`: an update may change its definition, storage and hosts, which a
   * running server keeps from its start), and the server on; else why not (MCP-01).
   */
  alive(
    record: AppRecord | undefined,
    app: string,
    server: string,
    consent: string | null,
    folders: string | null = null,
  ): McpAliveAnswer {
    if (!record || !mcpDefinition(record.manifest, server))
      return { alive: false, reason: "the app is no longer installed" };
    if (!record.enabled) return { alive: false, reason: "the app was disabled" };
    if (consent !== null && consent !== record.consentDigest)
      return { alive: false, reason: "the app was updated; an agent starts it again as the new version" };
    if (folders !== null && folders !== folderGrantsStamp(appFolders(record)))
      return {
        alive: false,
        reason: "the owner changed the app's folders; an agent starts it again with the new view",
      };
    if (this.row(mcpKey(app, server))?.ownerEnabled === false)
      return { alive: false, reason: "the owner turned the server off" };
    return { alive: true, reason: null };
  }

  /** Records how a start went: a failure counts towards the limit, a start that answered clears it. */
  started(
    app: string,
    server: string,
    report: { startId: string; ok: boolean; exitCode: number | null; reason: string | null },
    now: number,
  ): boolean {
    const key = mcpKey(app, server);
    const row = this.row(key);
    if (!row) return false;
    const start: McpStart = {
      at: new Date(now).toISOString(),
      ok: report.ok,
      exitCode: report.exitCode,
      reason: report.reason,
    };
    const failed = report.ok ? 0 : row.failedStarts + 1;
    const stillStarting = row.startingId === report.startId;
    this.sql.exec(
      `UPDATE mcp_servers SET failed_starts = ?, last_start = ?${stillStarting ? ", starting_id = NULL, starting_since = NULL" : ""} WHERE key = ?`,
      failed,
      JSON.stringify(start),
      key,
    );
    return true;
  }
}
