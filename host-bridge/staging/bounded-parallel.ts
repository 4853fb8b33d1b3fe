// A few files in flight at once instead of one: the scan's read-back and the listing each do
// thousands of small reads, and one-at-a-time leaves the disk and the thread pool
// idle between them. Answers never depend on completion order: results come back in input
// order, and when items fail, the one reported is the one earliest in the input, so a bundle
// with several bad files always names the same one.

/** How many files the scan's read-back and the listing keep in flight. */
export const FILES_IN_FLIGHT = 12;

type Outcome<S> = { index: number; stop: S } | { index: number; error: unknown };

/**
 * Runs `task` over `items` with at most `limit` running, started in input order. An item stops
 * the run by answering non-null or by throwing: no later item starts, every running one is
 * awaited (so nothing is still writing when the caller cleans up), and the stop or error of the
 * lowest index is returned or thrown. Every item before it ran to completion without stopping,
 * so the answer is the one a one-at-a-time loop would have given. Null when no item stops.
 */
export async function firstStopInOrder<T, S>(
  items: readonly T[],
  limit: number,
  task: (item: T, index: number) => Promise<S | null>,
): Promise<S | null> {
  let next = 0;
  let first: Outcome<S> | null = null;
  const keep = (outcome: Outcome<S>) => {
    if (first === null || outcome.index < first.index) first = outcome;
  };
  const lane = async () => {
    while (first === null && next < items.length) {
      const index = next++;
      try {
        const stop = await task(items[index]!, index);
        if (stop !== null) keep({ index, stop });
      } catch (error) {
        keep({ index, error });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane));
  const found = first as Outcome<S> | null;
  if (found === null) return null;
  if ("error" in found) throw found.error;
  return found.stop;
}

/** Maps `items` with at most `limit` running; results are in input order. A throw is rethrown as firstStopInOrder does. */
export async function mapInOrder<T, R>(
  items: readonly T[],
  limit: number,
  task: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  await firstStopInOrder(items, limit, async (item, index) => {
    results[index] = await task(item, index);
    return null;
  });
  return results;
}
