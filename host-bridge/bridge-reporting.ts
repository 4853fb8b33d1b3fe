// What the bridge tells the gateway on its own: security-log rows written as the bridge's own
// work, and each backend's status as it changes. Nothing here decides; a report that cannot be
// delivered is logged, never retried into a flood.
import type { BackendReport } from "../kernel/contracts/bridge-operations";
import type { EgressDecision } from "./egress/broker";
import { callGatewayRoute, type CallGateway } from "./bridge-contract";
import type { BridgeRefusal } from "./server";
import type { TransitionOp } from "./transition-progress";

export interface AuditRow {
  kind: string;
  outcome: "allowed" | "refused" | "info";
  subject: string;
  detail?: Record<string, unknown>;
  principal?: string;
  group?: string;
}

/**
 * Egress rows in flight at once. An app's broker decides as fast as the app connects (one
 * chatty app: ~170 a second, a flood: thousands), and a call each, all at once, had the
 * gateway reset connections: rows were lost, so the log's counts no longer added up.
 */
const EGRESS_ROWS_IN_FLIGHT = 8;
/** Egress rows waiting past this are dropped (and said in the bridge log), so memory stays bounded. */
const EGRESS_ROWS_WAITING = 50_000;

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export class BridgeReporting {
  private readonly reports = new Map<string, { next: BackendReport | null; drained: Promise<void> }>();
  private readonly waiting: AuditRow[] = [];
  private readonly egressRows: Array<{ row: AuditRow; written: () => void }> = [];
  private egressInFlight = 0;
  private egressDropped = 0;

  constructor(
    private readonly callGateway: CallGateway,
    private readonly log: (line: string) => void,
  ) {}

  /** Appends a security-log row as the bridge's own work. */
  async audit(row: AuditRow): Promise<void> {
    await callGatewayRoute(this.callGateway, "appendSecurityRow", {
      principal: "internal:bridge",
      detail: {},
      ...row,
    }).catch((error) => this.log(`bridge: could not write a security-log row: ${reasonOf(error)}`));
  }

  /** A row from before the gateway is up: written by writeWaitingRows once it is. */
  auditOnceUp(row: AuditRow): void {
    this.waiting.push(row);
  }

  async writeWaitingRows(): Promise<void> {
    for (const row of this.waiting.splice(0)) await this.audit(row);
  }

  /**
   * A refusal of the bridge's own API (never the presented secret). The log counts identical
   * refusals (same code and group) in one row, the rule the gateway's own refusals follow, so
   * a process hammering the port cannot flood it.
   */
  auditRefusal(code: BridgeRefusal, subject: string, group: string): void {
    void this.audit({ kind: `bridge_${code}`, outcome: "refused", subject, group });
  }

  /**
   * Each egress decision is a row under the app's name, counted per host in windows like any
   * refusal (refusal-windows.ts), so a chatty app does not drown the log. The rows go out in
   * order, a few at a time; resolves once this one was sent (or dropped).
   */
  auditEgress(decision: EgressDecision): Promise<void> {
    const target = `${decision.host}:${decision.port}`;
    const row: AuditRow = {
      kind: decision.outcome === "allowed" ? "egress_allowed" : (decision.code ?? "egress_refused"),
      outcome: decision.outcome,
      principal: `app:${decision.app}`,
      subject: target,
      group: target,
      detail: {
        ...(decision.address ? { address: decision.address } : {}),
        ...(decision.reason ? { reason: decision.reason } : {}),
      },
    };
    if (this.egressRows.length >= EGRESS_ROWS_WAITING) {
      if (this.egressDropped++ === 0)
        this.log(`bridge: egress rows are coming faster than the log takes them; dropping`);
      return Promise.resolve();
    }
    const written = new Promise<void>((resolve) => this.egressRows.push({ row, written: resolve }));
    this.sendEgressRows();
    return written;
  }

  private sendEgressRows(): void {
    while (this.egressInFlight < EGRESS_ROWS_IN_FLIGHT && this.egressRows.length > 0) {
      const next = this.egressRows.shift()!;
      this.egressInFlight += 1;
      void this.audit(next.row).finally(() => {
        this.egressInFlight -= 1;
        next.written();
        if (this.egressRows.length === 0 && this.egressDropped > 0) {
          this.log(`bridge: ${this.egressDropped} egress rows were dropped in a flood`);
          this.egressDropped = 0;
        }
        this.sendEgressRows();
      });
    }
  }

  /**
   * One report per app in flight, and only the newest one waiting. Reports sent side by side
   * can reach the registry out of order, and a stale "not healthy yet" landing after "healthy"
   * would leave the proxy answering 503 to a healthy backend (nothing re-reports a steady state).
   * Resolves once the newest report queued so far has been sent.
   */
  reportBackend(name: string, report: BackendReport): Promise<void> {
    const queued = this.reports.get(name);
    if (queued) {
      queued.next = report;
      return queued.drained;
    }
    const entry: { next: BackendReport | null; drained: Promise<void> } = { next: report, drained: Promise.resolve() };
    this.reports.set(name, entry);
    entry.drained = (async () => {
      while (entry.next) {
        const next = entry.next;
        entry.next = null;
        await callGatewayRoute(this.callGateway, "reportBackend", next, name).catch((error) =>
          this.log(`bridge: could not report ${name}'s backend: ${reasonOf(error)}`),
        );
      }
      this.reports.delete(name);
    })();
    return entry.drained;
  }

  /** Live progress for the owner's sockets: identifiers only, and advisory (the bridge's list is what the dashboard reads back). */
  announceProgress(installId: string, op: TransitionOp, step: string, status: string): void {
    void callGatewayRoute(this.callGateway, "announceInstallProgress", {
      install_id: installId,
      op,
      step,
      status,
    }).catch((error) => this.log(`bridge: could not announce install progress: ${reasonOf(error)}`));
  }
}
