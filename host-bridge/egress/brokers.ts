// The bridge's egress brokers, one per app child that has a network grant, each on its own
// socket in the runtime folder. Opened before the child starts, closed when it ends.
import { createHash } from "node:crypto";
import path from "node:path";
import type { HostPattern } from "../../kernel/rules/network-grant";
import { startBroker, type EgressBroker, type EgressDecision } from "./broker";
import type { OriginTrust } from "./origin-tls";
import type { PlacedSecret } from "./secret-placeholders";

export class EgressBrokers {
  private readonly open = new Map<string, EgressBroker>();

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
    const broker = await startBroker({ app, grant, socketPath, onDecision: this.onDecision, secrets, ...trust });
    this.open.set(key, broker);
    return socketPath;
  }

  async stop(key: string): Promise<void> {
    const broker = this.open.get(key);
    if (!broker) return;
    this.open.delete(key);
    await broker.close();
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.open.keys()].map((key) => this.stop(key)));
  }
}
