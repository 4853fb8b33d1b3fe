// Who settles a transition when only one half dies (docs/design/faults.md). An install, update
// or uninstall is one request from the gateway to the bridge; when workerd dies (or drops the
// request) meanwhile, the bridge goes on alone and finishes its part, but the gateway never
// records it: the record names the old version, the journal and the rollback copy stay, and the
// transition lock answers app_busy until it lapses. Left so, the next start undid what had been
// serving since (everything the new version wrote was lost). Here the bridge settles such a
// transition itself as soon as the gateway answers again: the journal goes to the gateway,
// which records a ready update forward (record, secrets, mcp.json, jobs, row) or says undo,
// then the folders follow and the lock is released. The same settlement runs after every
// workerd restart for whatever journals are left, once the operations in flight have ended.
import { setTimeout as sleep } from "node:timers/promises";
import type { z } from "zod";
import type { JournalQuestionSchema } from "../../kernel/contracts/bridge-operations";
import { callGatewayRoute, type CallGateway } from "../bridge-contract";
import { settleOne, type RecoveryContext } from "./recover-transitions";
import { listJournals, readJournal, type Journal } from "./transition-journal";

/** How long a settlement waits for the gateway to answer again (workerd restarts within seconds). */
const GATEWAY_WAIT_MS = 60_000;

/** What the gateway is asked about a journal: the record decides, and a ready update is recorded forward. */
export function journalQuestion(journal: Journal): z.input<typeof JournalQuestionSchema> {
  if (journal.op === "install") return { op: "install", digest: journal.digest };
  if (journal.op === "update")
    return {
      op: "update",
      fromDigest: journal.fromDigest,
      toDigest: journal.toDigest,
      ...(journal.ready ? { ready: journal.ready } : {}),
    };
  return { op: "uninstall", consentDigest: journal.consentDigest };
}

export interface SettlementContext extends RecoveryContext {
  callGateway: CallGateway;
  /** Stops an app's backend before its folder is undone. */
  stopBackend(name: string): Promise<void>;
}

export class TransitionSettlement {
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(private readonly ctx: SettlementContext) {}

  /**
   * Runs one lifecycle operation the gateway asked for. When its caller went away before the
   * answer (`caller` aborted), the app the operation names (`nameOf`, from its result or its
   * request) is settled with the gateway before the operation counts as ended.
   */
  async track<T>(caller: AbortSignal, nameOf: (result: T | undefined) => string | null, work: () => Promise<T>) {
    const startedAt = Date.now();
    const run = (async () => {
      let result: T | undefined;
      try {
        result = await work();
        return result;
      } finally {
        const name = nameOf(result);
        if (caller.aborted && name !== null) await this.settleAbandoned(name, startedAt);
      }
    })();
    this.inFlight.add(run);
    try {
      return await run;
    } finally {
      this.inFlight.delete(run);
    }
  }

  /** After workerd came back: the operations in flight end, every journal left is settled, every older lock released. */
  async afterGatewayRestart(restartedAt: number): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
    for (const journal of await listJournals(this.ctx.home)) await this.settle(journal);
    await this.releaseLocks(null, restartedAt);
  }

  private async settleAbandoned(name: string, takenBefore: number): Promise<void> {
    this.ctx.log(
      `bridge: the request for ${name}'s transition went away before its answer; settling it with the gateway`,
    );
    const journal = await readJournal(this.ctx.home, name);
    if (journal) await this.settle(journal);
    await this.releaseLocks(name, takenBefore + 1);
  }

  private async settle(journal: Journal): Promise<void> {
    try {
      const { outcome } = await this.untilGatewayAnswers(() =>
        callGatewayRoute(this.ctx.callGateway, "askJournal", journalQuestion(journal), journal.name),
      );
      if (outcome === "undo" && journal.op !== "uninstall") await this.ctx.stopBackend(journal.name);
      await settleOne(this.ctx, journal, outcome);
      this.ctx.log(
        `bridge: the ${journal.op} of ${journal.name} whose request went away was ${outcome === "finish" ? "finished" : "undone"}`,
      );
    } catch (error) {
      this.ctx.log(
        `bridge: could not settle the ${journal.op} of ${journal.name}; the next start will: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  private async releaseLocks(name: string | null, takenBefore: number): Promise<void> {
    try {
      await this.untilGatewayAnswers(() =>
        callGatewayRoute(this.ctx.callGateway, "releaseAbandonedTransitions", { name, takenBefore }),
      );
    } catch (error) {
      this.ctx.log(
        `bridge: could not release abandoned transition locks: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  private async untilGatewayAnswers<T>(call: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + GATEWAY_WAIT_MS;
    for (;;) {
      try {
        return await call();
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await sleep(250);
      }
    }
  }
}
