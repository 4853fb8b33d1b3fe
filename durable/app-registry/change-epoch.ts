// AppRegistry's change epoch: a counter every write to a record, a backend's status or secret,
// or the registry's own start bumps in the same turn as the write. The worker keeps its reads
// of the registry while the epoch they were read under is current (workers/app-registry.ts).
// That works only because workerd runs the gateway's Durable Objects in the worker's own
// isolate, sharing this module's one instance; the probe lets the worker prove that at run
// time instead of assuming it, and keep nothing where it does not hold.

let epoch = 0;
let probe: string | null = null;

/** Called by AppRegistry after every change a kept read could reflect. */
export function registryChanged(): void {
  epoch++;
}

/** The current epoch; a read taken under an older one is stale. */
export function registryEpoch(): number {
  return epoch;
}

/** This module instance's own mark: two callers that see the same mark share the instance, and so the epoch. */
export function isolateProbe(): string {
  // Random values may not be made at module load in workerd, so the mark is made on first use.
  probe ??= crypto.randomUUID();
  return probe;
}
