// The bridge's egress brokers, one per app child that has a network grant, each on its own
// socket in the runtime folder. Opened before the child starts, closed when it ends.
import { createHash } from "node:crypto";
import path from "node:path";
import type { HostPattern } from "../../kernel/rules/network-grant";
import { startBroker, type EgressBroker, type EgressDecision } from "./broker";
import type { OriginTrust } from "./origin-tls";
import type { PlacedSecret } from "./secret-placeholders";

/** The most refusals a broker keeps for the run it served: enough to name the cause of a failure. */
const REFUSALS_KEPT = 8;

export class EgressBrokers {
  private readonly open = new Map<string, EgressBroker>();
  /** What each open broker refused during its run, so a failed run can name it (not only the security log). */
  private readonly refusals = new Map<string, EgressDecision[]>();

  /** `originTrust` is asked only when a broker first writes a secret (origin-tls.ts); it may read files. */
  constructor(
    private readonly runtimeDir: string,
    private readonly onDecision: (decision: EgressDecision) => void,
    private readonly originTrust?: () => OriginTrust,
  ) {}

  /**
   * Starts (or restarts) the broker for `key` (an app, or an app's install step) and answers its
   * socket path; `secrets` are the ones it writes into requests to their origins for this start.
   */
  async start(
    key: string,
    app: string,
    grant: readonly HostPattern[] | "all",
    secrets: readonly PlacedSecret[] = [],
  ): Promise<string> {
    await this.stop(key);
    const socketPath = path.join(
      this.runtimeDir,
      `egress-${createHash("sha256").update(key).digest("hex").slice(0, 12)}.sock`,
    );
    const trust = secrets.length > 0 && this.originTrust ? { trust: this.originTrust() } : {};
    const refused: EgressDecision[] = [];
    const onDecision = (decision: EgressDecision) => {
      this.onDecision(decision);
      if (decision.outcome === "refused" && refused.length < REFUSALS_KEPT) refused.push(decision);
    };
    const broker = await startBroker({ app, grant, socketPath, onDecision, secrets, ...trust });
    this.open.set(key, broker);
    this.refusals.set(key, refused);
    return socketPath;
  }

  /** Stops the broker for `key`; answers the connections it refused during its run (the first few). */
  async stop(key: string): Promise<EgressDecision[]> {
    const broker = this.open.get(key);
    const refused = this.refusals.get(key) ?? [];
    this.refusals.delete(key);
    if (!broker) return refused;
    this.open.delete(key);
    await broker.close();
    return refused;
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.open.keys()].map((key) => this.stop(key)));
  }
}
