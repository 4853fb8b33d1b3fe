// Synchronous file work runs in slices: awaiting this between slices lets the event loop serve
// the bridge's other requests in between.

/** Resolves after the event loop has run once (timers and I/O callbacks included). */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
