// How an update reaches the app's backend through the bridge's supervisor: the health gate of
// the new version, started in place of the old one or beside it (supervisor/successor.ts), and
// what the gate says when the new version never answers 2xx.
import type { AppManifest } from "../../kernel/contracts/manifest";
import type { BridgeRuntime } from "../bridge-runtime";
import type { SupervisedBackendStatus } from "../supervisor/backend-supervisor";

/** A health gate's outcome: passed, or what the backend did instead. */
export type HealthGate = { ok: true } | { ok: false; reason: string };

/** How an update reaches the app's backend (the bridge's supervisor). */
export interface BackendControl {
  stop(name: string): Promise<void>;
  /** Starts the backend of the folder now at apps/<name> and waits for its health check; the reason says why not. */
  startHealthy(name: string, manifest: AppManifest, timeoutMs: number): Promise<HealthGate>;
  /** Starts it without waiting (the old version, after a rollback). */
  start(name: string, manifest: AppManifest): Promise<void>;
  /** The running backend is not restarted while the update moves its folder; it keeps serving. */
  hold(name: string): void;
  release(name: string): void;
  /**
   * Starts the backend of the folder now at apps/<name> beside the running one, on its own
   * socket, and waits for its health check; the gateway keeps routing to the running one.
   */
  startBesideHealthy(name: string, manifest: AppManifest, timeoutMs: number): Promise<HealthGate>;
  /** The new backend takes over (the gateway routes to it from one report on), then the old one stops. */
  switchToNew(name: string): Promise<void>;
  /** Stops a new backend that did not pass its gate; the running one never noticed. */
  dropNew(name: string): Promise<void>;
}

/** What the gate looks at while it waits: the backend's status and its last missed probe. */
type GateView = () => { status: SupervisedBackendStatus | null; lastMiss: string | null };

/** The update's view of the app's backend, for one bridge. */
export function updateBackendControl(rt: BridgeRuntime): BackendControl {
  const { supervisor } = rt;
  return {
    stop: (name) => rt.stopBackend(name),
    start: async (name, manifest) => {
      await rt.startBackend(name, manifest, rt.digests.get(name));
    },
    startHealthy: async (name, manifest, timeoutMs) => {
      const started = await rt.startBackend(name, manifest, rt.digests.get(name));
      if (!started.started) return { ok: false, reason: started.reason ?? "it did not start" };
      return healthGate(manifest, timeoutMs, () => ({
        status: supervisor.status(name),
        lastMiss: supervisor.lastHealthMiss(name),
      }));
    },
    hold: (name) => supervisor.hold(name),
    release: (name) => supervisor.release(name),
    startBesideHealthy: async (name, manifest, timeoutMs) => {
      const started = await rt.startSuccessor(name, manifest);
      if (!started.started) return { ok: false, reason: started.reason ?? "it did not start" };
      return healthGate(manifest, timeoutMs, () => {
        const seen = supervisor.successorStatus(name);
        return { status: seen?.status ?? null, lastMiss: seen?.lastMiss ?? null };
      });
    },
    switchToNew: async (name) => {
      await supervisor.promoteSuccessor(name);
    },
    dropNew: (name) => supervisor.dropSuccessor(name),
  };
}

/**
 * Waits until the backend answers its health check with 2xx, or says what it did instead: it
 * exited, or what it last answered (the owner's best clue: a 500 with its reason, say).
 */
async function healthGate(manifest: AppManifest, timeoutMs: number, view: GateView): Promise<HealthGate> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { status, lastMiss } = view();
    if (status?.healthy) return { ok: true };
    if (status && !status.running && status.exit) {
      return {
        ok: false,
        reason: `its backend ${status.exit.signal ? `was killed by ${status.exit.signal}` : `exited with code ${status.exit.code}`} before it answered its health check`,
      };
    }
    if (Date.now() >= deadline) {
      return {
        ok: false,
        reason: `its backend did not answer its health check (GET ${manifest.backend?.healthCheck ?? "/health"}) with 2xx within ${Math.round(timeoutMs / 1000)} s${lastMiss ? `; last it ${lastMiss}` : ""}`,
      };
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
