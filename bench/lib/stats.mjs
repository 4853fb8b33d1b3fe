// Medians with their spread (min-max), and ratios of medians.

/** {median, min, max, n} of the finite numbers in `values`. */
export function summarize(values) {
  const xs = values.filter((x) => typeof x === "number" && Number.isFinite(x)).sort((a, b) => a - b);
  if (xs.length === 0) return { median: null, min: null, max: null, n: 0 };
  const mid = Math.floor(xs.length / 2);
  const median = xs.length % 2 === 1 ? xs[mid] : (xs[mid - 1] + xs[mid]) / 2;
  return { median, min: xs[0], max: xs[xs.length - 1], n: xs.length };
}

/** a / b of two medians, or null. */
export function ratio(a, b) {
  if (a === null || b === null || b === 0) return null;
  return a / b;
}
