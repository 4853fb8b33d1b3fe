// A seeded xorshift32: the same generated inputs on every run, so a failing case can be
// replayed. The bench's generated bundle and the scan tests' generated inputs both use it.

/** The next 32-bit unsigned value of the sequence `seed` starts (a zero seed starts at 1). */
export function xorshift(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>>= 0);
  };
}
