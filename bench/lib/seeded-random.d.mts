// Types of seeded-random.mjs for the TypeScript suites that use it.

/** The next 32-bit unsigned value of the sequence `seed` starts (a zero seed starts at 1). */
export function xorshift(seed: number): () => number;
