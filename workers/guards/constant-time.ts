// Secrets are compared in constant time so a caller cannot learn a prefix from timing.
const encoder = new TextEncoder();

/** True when both strings are equal, compared without an early exit on the first difference. */
export function equalsInConstantTime(a: string, b: string): boolean {
  const left = encoder.encode(a);
  const right = encoder.encode(b);
  if (left.byteLength !== right.byteLength) return false;
  return crypto.subtle.timingSafeEqual(left, right);
}
