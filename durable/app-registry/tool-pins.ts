// The tool definitions each app's MCP server was pinned to, per install (app, server, consent
// digest), the owner's policy of each tool, the changes a later run offered that wait for the
// owner, and the app's recent calls (issue 39). A new install's first run pins what it offers;
// afterwards what differs from a pin is a change, withheld from the agent until the owner
// approves it. The digests come from the worker (crypto is async; these writes are not).
import type { AppRecord } from "../../kernel/contracts/app-record";
import {
  defaultToolPolicy,
  isReservedToolName,
  RECENT_CALLS_KEPT,
  type RecentCall,
  type ServerToolsView,
  type ToolCallRecord,
  type ToolDefinition,
  type ToolPolicy,
  type ToolState,
  type ToolView,
} from "../../kernel/contracts/mcp-tools";

/** A definition with the digest the worker computed for it. */
export interface OfferedTool {
  definition: ToolDefinition;
  digest: string;
}

/** A change waiting for the owner. */
export interface ToolChange {
  tool: string;
  change: "new" | "changed" | "removed";
  before: ToolDefinition | null;
  after: ToolDefinition | null;
  proposedDigest: string;
  approvalId: string | null;
}

/** What a call may do, as the pins and the policy say. */
export type PinVerdict =
  { visible: true; policy: ToolPolicy } | { visible: false; state: ToolState | "unknown"; conflictWith: string | null };

/** What the owner chose for a tool, kept across a re-pin (an update, an approved change). */
interface OwnerChoice {
  policy: ToolPolicy | null;
  logArguments: boolean;
}

interface PinRow {
  tool: string;
  definition: ToolDefinition;
  digest: string;
  policy: ToolPolicy;
  policySetBy: "default" | "owner";
  logArguments: boolean;
}

const REMOVED = "removed";

/** The part of a Durable Object's SQL storage these tables use (a unit test hands in SQLite). */
export interface ToolPinsSql {
  exec(query: string, ...bindings: Array<string | number | null>): { toArray(): Array<Record<string, unknown>> };
}

function parsePin(row: Record<string, unknown>): PinRow {
  return {
    tool: String(row.tool),
    definition: JSON.parse(String(row.definition)) as ToolDefinition,
    digest: String(row.digest),
    policy: String(row.policy) as ToolPolicy,
    policySetBy: String(row.policy_set_by) === "owner" ? "owner" : "default",
    logArguments: Number(row.log_arguments) === 1,
  };
}

function ownerChoiceOf(pin: PinRow | undefined): OwnerChoice {
  return { policy: pin?.policySetBy === "owner" ? pin.policy : null, logArguments: pin?.logArguments ?? false };
}

/** True when `a` was installed before `b` (ties by name), so `a` keeps a name both offer. */
function installedBefore(a: AppRecord, b: AppRecord): boolean {
  return a.installedAt < b.installedAt || (a.installedAt === b.installedAt && a.name < b.name);
}

export class ToolPins {
  constructor(private readonly sql: ToolPinsSql) {}

  private pins(app: string, server: string): Map<string, PinRow> {
    const rows = this.sql.exec("SELECT * FROM mcp_tool_pins WHERE app = ? AND server = ?", app, server).toArray();
    return new Map(rows.map((row) => [String(row.tool), parsePin(row)]));
  }

  private pinnedFor(app: string, server: string): { consent: string; pinnedAt: number } | null {
    const row = this.sql
      .exec("SELECT consent_digest, pinned_at FROM mcp_tool_servers WHERE app = ? AND server = ?", app, server)
      .toArray()[0];
    return row ? { consent: String(row.consent_digest), pinnedAt: Number(row.pinned_at) } : null;
  }

  /**
   * Takes a run's listing. The first listing of an install pins every tool (an owner-chosen
   * policy of a tool of the same name carries over an update); a later one records each
   * difference from the pins as a change for the owner. False when `consent` is not the
   * install's (a run of a version that is no longer installed).
   */
  report(record: AppRecord, server: string, consent: string, offered: OfferedTool[], now: number): boolean {
    if (record.consentDigest !== consent) return false;
    const app = record.name;
    const pinned = this.pinnedFor(app, server);
    if (pinned === null || pinned.consent !== consent) {
      const before = this.pins(app, server);
      this.sql.exec("DELETE FROM mcp_tool_pins WHERE app = ? AND server = ?", app, server);
      this.sql.exec("DELETE FROM mcp_tool_changes WHERE app = ? AND server = ?", app, server);
      this.sql.exec(
        "INSERT OR REPLACE INTO mcp_tool_servers (app, server, consent_digest, pinned_at) VALUES (?, ?, ?, ?)",
        app,
        server,
        consent,
        now,
      );
      for (const tool of offered) this.writePin(app, server, tool, ownerChoiceOf(before.get(tool.definition.name)));
      return true;
    }
    const pins = this.pins(app, server);
    const seen = new Set<string>();
    for (const tool of offered) {
      const name = tool.definition.name;
      seen.add(name);
      const pin = pins.get(name);
      if (pin && pin.digest === tool.digest) this.forgetChange(app, server, name);
      else this.noteChange(app, server, name, pin ? "changed" : "new", tool.definition, tool.digest);
    }
    for (const name of pins.keys()) if (!seen.has(name)) this.noteChange(app, server, name, "removed", null, REMOVED);
    return true;
  }

  /** Pins a definition: the owner's choices carry over; a policy the owner never chose follows the annotations. */
  private writePin(app: string, server: string, tool: OfferedTool, owner: OwnerChoice) {
    this.sql.exec(
      "INSERT OR REPLACE INTO mcp_tool_pins (app, server, tool, definition, digest, policy, policy_set_by, log_arguments) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      app,
      server,
      tool.definition.name,
      JSON.stringify(tool.definition),
      tool.digest,
      owner.policy ?? defaultToolPolicy(tool.definition.annotations),
      owner.policy !== null ? "owner" : "default",
      owner.logArguments ? 1 : 0,
    );
  }

  private forgetChange(app: string, server: string, tool: string): void {
    this.sql.exec("DELETE FROM mcp_tool_changes WHERE app = ? AND server = ? AND tool = ?", app, server, tool);
  }

  /** Records a change; the same proposal keeps its approval, another one needs a new one. */
  private noteChange(
    app: string,
    server: string,
    tool: string,
    change: ToolChange["change"],
    proposed: ToolDefinition | null,
    digest: string,
  ): void {
    const existing = this.sql
      .exec("SELECT proposed_digest FROM mcp_tool_changes WHERE app = ? AND server = ? AND tool = ?", app, server, tool)
      .toArray()[0];
    if (existing && String(existing.proposed_digest) === digest) return;
    this.sql.exec(
      "INSERT OR REPLACE INTO mcp_tool_changes (app, server, tool, change, proposed, proposed_digest, approval_id) VALUES (?, ?, ?, ?, ?, ?, NULL)",
      app,
      server,
      tool,
      change,
      proposed === null ? null : JSON.stringify(proposed),
      digest,
    );
  }

  /** The changes of a server that wait for the owner, with the pinned definition beside each. */
  changes(app: string, server: string): ToolChange[] {
    const pins = this.pins(app, server);
    return this.sql
      .exec("SELECT * FROM mcp_tool_changes WHERE app = ? AND server = ? ORDER BY tool", app, server)
      .toArray()
      .map((row) => ({
        tool: String(row.tool),
        change: String(row.change) as ToolChange["change"],
        before: pins.get(String(row.tool))?.definition ?? null,
        after: row.proposed === null ? null : (JSON.parse(String(row.proposed)) as ToolDefinition),
        proposedDigest: String(row.proposed_digest),
        approvalId: row.approval_id === null ? null : String(row.approval_id),
      }));
  }

  /** Notes the approval that asks about a change (only while the change is still that proposal). */
  setChangeApproval(app: string, server: string, tool: string, proposedDigest: string, approvalId: string): void {
    this.sql.exec(
      "UPDATE mcp_tool_changes SET approval_id = ? WHERE app = ? AND server = ? AND tool = ? AND proposed_digest = ?",
      approvalId,
      app,
      server,
      tool,
      proposedDigest,
    );
  }

  /**
   * The owner approved a change: the proposal becomes the pin (a removed tool loses its pin).
   * A policy the owner chose stays; a default one follows the new annotations.
   */
  acceptChange(app: string, server: string, tool: string, proposedDigest: string): void {
    const change = this.changes(app, server).find((c) => c.tool === tool && c.proposedDigest === proposedDigest);
    if (!change) return;
    const pin = this.pins(app, server).get(tool);
    if (change.after === null) {
      this.sql.exec("DELETE FROM mcp_tool_pins WHERE app = ? AND server = ? AND tool = ?", app, server, tool);
    } else {
      this.writePin(app, server, { definition: change.after, digest: proposedDigest }, ownerChoiceOf(pin));
    }
    this.forgetChange(app, server, tool);
  }

  /** Who else holds a tool's name: the platform, or an app installed earlier whose current install pinned it. */
  private conflictOf(records: ReadonlyMap<string, AppRecord>, record: AppRecord, tool: string): string | null {
    if (isReservedToolName(tool)) return "platform";
    const others = this.sql
      .exec(
        `SELECT p.app FROM mcp_tool_pins p JOIN mcp_tool_servers s ON s.app = p.app AND s.server = p.server
         WHERE lower(p.tool) = lower(?) AND p.app != ?`,
        tool,
        record.name,
      )
      .toArray()
      .map((row) => String(row.app));
    for (const name of others.sort()) {
      const other = records.get(name);
      if (other && installedBefore(other, record)) return name;
    }
    return null;
  }

  /** Every declared server of the app with its tools, their policy and state. */
  views(records: ReadonlyMap<string, AppRecord>, record: AppRecord): ServerToolsView[] {
    return Object.keys(record.manifest.mcpServers ?? {})
      .sort()
      .map((server) => {
        const pinned = this.pinnedFor(record.name, server);
        const current = pinned !== null && pinned.consent === record.consentDigest;
        const pins = current ? this.pins(record.name, server) : new Map<string, PinRow>();
        const changes = current ? this.changes(record.name, server) : [];
        const tools: ToolView[] = [];
        for (const pin of pins.values()) {
          const change = changes.find((c) => c.tool === pin.tool);
          const conflictWith = this.conflictOf(records, record, pin.tool);
          tools.push({
            name: pin.tool,
            state: conflictWith !== null ? "conflict" : (change?.change ?? "pinned"),
            policy: pin.policy,
            policySetBy: pin.policySetBy,
            pinned: pin.definition,
            offered: change?.after ?? null,
            approvalId: change?.approvalId ?? null,
            conflictWith,
            logArguments: pin.logArguments,
          });
        }
        for (const change of changes.filter((c) => !pins.has(c.tool) && c.after !== null)) {
          tools.push({
            name: change.tool,
            state: "new",
            policy: defaultToolPolicy(change.after!.annotations),
            policySetBy: "default",
            pinned: null,
            offered: change.after,
            approvalId: change.approvalId,
            conflictWith: this.conflictOf(records, record, change.tool),
            logArguments: false,
          });
        }
        tools.sort((a, b) => a.name.localeCompare(b.name));
        return {
          server,
          consentDigest: current ? pinned.consent : null,
          pinnedAt: current ? new Date(pinned.pinnedAt).toISOString() : null,
          tools,
        };
      });
  }

  /** Whether a call to `tool`, whose definition the server offers now has `digest`, may go on, and under which policy. */
  verdict(records: ReadonlyMap<string, AppRecord>, record: AppRecord, server: string, tool: string, digest: string) {
    const pinned = this.pinnedFor(record.name, server);
    const pin =
      pinned !== null && pinned.consent === record.consentDigest ? this.pins(record.name, server).get(tool) : undefined;
    if (!pin) return { visible: false, state: "unknown", conflictWith: null } satisfies PinVerdict;
    const conflictWith = this.conflictOf(records, record, tool);
    if (conflictWith !== null) return { visible: false, state: "conflict", conflictWith } satisfies PinVerdict;
    if (pin.digest !== digest) return { visible: false, state: "changed", conflictWith: null } satisfies PinVerdict;
    return { visible: true, policy: pin.policy } satisfies PinVerdict;
  }

  /** A pinned tool of the app's current install, or undefined. */
  private currentPin(record: AppRecord, server: string, tool: string): PinRow | undefined {
    const pinned = this.pinnedFor(record.name, server);
    if (pinned === null || pinned.consent !== record.consentDigest) return undefined;
    return this.pins(record.name, server).get(tool);
  }

  /** The owner's policy for a pinned tool of the current install; the one it replaced, or null when there is no such tool. */
  setPolicy(record: AppRecord, server: string, tool: string, policy: ToolPolicy): ToolPolicy | null {
    const pin = this.currentPin(record, server, tool);
    if (!pin) return null;
    this.sql.exec(
      "UPDATE mcp_tool_pins SET policy = ?, policy_set_by = 'owner' WHERE app = ? AND server = ? AND tool = ?",
      policy,
      record.name,
      server,
      tool,
    );
    return pin.policy;
  }

  /** The owner's switch for logging a pinned tool's argument values; the one it replaced, or null when there is no such tool. */
  setLogArguments(record: AppRecord, server: string, tool: string, log: boolean): boolean | null {
    const pin = this.currentPin(record, server, tool);
    if (!pin) return null;
    this.sql.exec(
      "UPDATE mcp_tool_pins SET log_arguments = ? WHERE app = ? AND server = ? AND tool = ?",
      log ? 1 : 0,
      record.name,
      server,
      tool,
    );
    return pin.logArguments;
  }

  /**
   * Keeps one call for the owner's recent view (its argument values only when the owner logs
   * that tool's); the oldest beyond RECENT_CALLS_KEPT per app go. Answers the values kept, or null.
   */
  recordCall(app: string, server: string, call: ToolCallRecord, now: number): string | null {
    const logged = this.sql
      .exec("SELECT log_arguments FROM mcp_tool_pins WHERE app = ? AND server = ? AND tool = ?", app, server, call.tool)
      .toArray()[0];
    const values = Number(logged?.log_arguments) === 1 ? call.argumentsShown : null;
    this.sql.exec(
      "INSERT INTO mcp_tool_calls (app, server, tool, outcome, arguments_digest, arguments, duration_ms, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      app,
      server,
      call.tool,
      call.outcome,
      call.argumentsDigest,
      values,
      call.durationMs,
      now,
    );
    this.sql.exec(
      "DELETE FROM mcp_tool_calls WHERE app = ? AND id NOT IN (SELECT id FROM mcp_tool_calls WHERE app = ? ORDER BY id DESC LIMIT ?)",
      app,
      app,
      RECENT_CALLS_KEPT,
    );
    return values;
  }

  /** The app's recent calls, newest first. */
  recentCalls(app: string): RecentCall[] {
    return this.sql
      .exec("SELECT * FROM mcp_tool_calls WHERE app = ? ORDER BY id DESC LIMIT ?", app, RECENT_CALLS_KEPT)
      .toArray()
      .map((row) => ({
        at: new Date(Number(row.at)).toISOString(),
        server: String(row.server),
        tool: String(row.tool),
        outcome: String(row.outcome) as RecentCall["outcome"],
        argumentsDigest: String(row.arguments_digest),
        arguments: row.arguments === null || row.arguments === undefined ? null : String(row.arguments),
        durationMs: Number(row.duration_ms),
      }));
  }

  /** An uninstalled app's pins, changes and calls go with it (a later install of the name pins afresh). */
  removeOf(app: string): void {
    for (const table of ["mcp_tool_pins", "mcp_tool_changes", "mcp_tool_servers", "mcp_tool_calls"])
      this.sql.exec(`DELETE FROM ${table} WHERE app = ?`, app);
  }
}
