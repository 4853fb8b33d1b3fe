// Signals a child's whole process group: a backend, hook or server and everything it forked.

/**
 * Sends `signal` to process group `pgid`. No pgid, 0 or 1 is ignored: `kill(-0)` would hit this
 * process's own group and `kill(-1)` every process it may signal. A group already gone is not an error.
 */
export function signalProcessGroup(pgid: number | null | undefined, signal: NodeJS.Signals): void {
  if (!pgid || pgid <= 1) return;
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is gone already
  }
}
