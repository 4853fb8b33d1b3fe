// Change epochs: a counter a Durable Object bumps in the same turn as every write a kept read
// could reflect. The worker keeps its reads of the object while the epoch they were read under
// is current (workers/kept-reads.ts). That works only because workerd runs the gateway's
// Durable Objects in the worker's own isolate, sharing this module's one instance; the probe
// lets the worker prove that at run time instead of assuming it, and keep nothing where it
// does not hold.

/** One object's counter: bumped after each change, read before each kept read. */
export class ChangeEpoch {
  #epoch = 0;

  /** Called by the object in the same turn as a change a kept read could reflect. */
  bump(): void {
    this.#epoch++;
  }

  /** The current epoch; a read taken under an older one is stale. */
  get current(): number {
    return this.#epoch;
  }
}

/** AppRegistry's: a record written or removed, a backend's status or secret, "all reported", a token epoch, its load. */
export const registryEpoch = new ChangeEpoch();

/** SessionStore's: a session minted, ended, used, bound to its first address or named, and its load. */
export const sessionsEpoch = new ChangeEpoch();

let probe: string | null = null;

/** This module instance's own mark: two callers that see the same mark share the instance, and so the epochs. */
export function isolateProbe(): string {
  // Random values may not be made at module load in workerd, so the mark is made on first use.
  probe ??= crypto.randomUUID();
  return probe;
}
