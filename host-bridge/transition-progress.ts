// The steps of each install, update or uninstall the owner named with an install id: kept for
// the dashboard to read back, and announced live on the owner's sockets.
import type { BridgeReporting } from "./bridge-reporting";
import { pauseAtNamedStep } from "./install/test-pause";

export type TransitionOp = "install" | "update" | "uninstall" | "transition";
export interface ProgressStep {
  step: string;
  status: string;
  at: string;
  message?: string;
}
export type ProgressSink = (event: ProgressStep) => Promise<void>;

export class TransitionProgress {
  private readonly lists = new Map<string, Array<Record<string, unknown>>>();

  constructor(
    private readonly home: string,
    private readonly reporting: BridgeReporting,
    private readonly log: (line: string) => void,
  ) {}

  /** The steps recorded under `id`, or null when no transition named it. */
  steps(id: string): Array<Record<string, unknown>> | null {
    return this.lists.get(id) ?? null;
  }

  /**
   * The progress list of a transition the caller named, and the sink that fills it (in the test
   * build, also where a transition can be paused: install/test-pause.ts).
   */
  sink(op: TransitionOp, id: string | undefined): ProgressSink {
    const events: Array<Record<string, unknown>> = [];
    if (id) this.lists.set(id, events);
    return async (event) => {
      events.push({ op, ...event });
      if (id) this.reporting.announceProgress(id, op, event.step, event.status);
      if (TEST_BUILD) await pauseAtNamedStep(this.home, `${op}:${event.step}:${event.status}`, this.log);
    };
  }
}
