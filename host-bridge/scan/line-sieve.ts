// Which lines of a file a set of line patterns could match, found in the raw bytes without
// decoding them. A line can match a pattern only if it holds the pattern's required literals in
// order (required-literals.ts), and an ASCII literal sits at the same bytes in a file whatever
// the rest of it decodes to; so the lines answered are a superset of the lines that match, and
// decoding and the pattern's own test stay the only judges of what is found. Most files, and
// almost all binary ones, then need neither: decoding pseudo-random bytes as UTF-8 costs about
// 25 times what decoding text does.
import { bestClause, holdsInOrder, requiredClauses, type Clause } from "./required-literals";

interface Alternative {
  /** Its clauses, in the order a match holds them (lower-cased when caseless). */
  clauses: Clause[];
  /** The same clauses as literal ids: a file lacking every literal of one is passed over. */
  clauseIds: number[][];
  caseless: boolean;
  /** Finds the rarest clause's literals, to reach the lines that may hold a match. */
  finder: RegExp;
}

/** One candidate line: byte offsets [start, end) and the patterns (by index) it may match. */
export interface CandidateLine {
  start: number;
  end: number;
  patterns: number[];
}

const escapeLiteral = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
const lower = (c: number) => (c >= 0x41 && c <= 0x5a ? c + 0x20 : c);
const caseVariants = (c: number, caseless: boolean) => (caseless && c >= 0x61 && c <= 0x7a ? [c, c - 0x20] : [c]);

// Rough frequencies of bytes in text and code (English letter frequencies, per mille), used only
// to key each literal by its rarest pair of bytes: the fewer positions of a file that hit a key,
// the fewer compares. Any choice finds the same literals.
const LETTER_PER_MILLE: Record<string, number> = {
  e: 127,
  t: 91,
  a: 82,
  o: 75,
  i: 70,
  n: 67,
  s: 63,
  h: 61,
  r: 60,
  d: 43,
  l: 40,
  c: 28,
  u: 28,
  m: 24,
  w: 24,
  f: 22,
  g: 20,
  y: 20,
  p: 19,
  b: 15,
  v: 10,
  k: 8,
  j: 2,
  x: 2,
  q: 1,
  z: 1,
};
function perMille(c: number): number {
  const ch = String.fromCharCode(c);
  if (ch in LETTER_PER_MILLE) return LETTER_PER_MILLE[ch]!;
  if (ch === " ") return 150;
  if (/[.()/"'=_-]/.test(ch)) return 20;
  return 5;
}

/**
 * Which of a few literals occur in a file, in one pass over its bytes. A one-byte literal is
 * looked for natively; a longer one is looked up at each position by its rarest pair of bytes,
 * so only the few literals keyed by that pair are compared there.
 */
class LiteralTable {
  /** Each literal, and the offset in it of the pair of bytes it is keyed by. */
  private readonly literals: Array<{ bytes: Buffer; caseless: boolean; keyAt: number }> = [];
  private readonly ids = new Map<string, number>();
  /** Bucket number + 1 of the literals starting with a byte pair, by (first | second << 8). */
  private readonly pairBucket = new Int32Array(65536);
  private readonly buckets: number[][] = [];

  id(literal: string, caseless: boolean): number {
    const key = `${caseless ? "i" : "c"}:${literal}`;
    const known = this.ids.get(key);
    if (known !== undefined) return known;
    const id = this.literals.length;
    const bytes = Buffer.from(literal, "latin1");
    let keyAt = 0;
    for (let j = 1; j + 1 < bytes.length; j++)
      if (perMille(bytes[j]!) * perMille(bytes[j + 1]!) < perMille(bytes[keyAt]!) * perMille(bytes[keyAt + 1]!))
        keyAt = j;
    this.literals.push({ bytes, caseless, keyAt });
    this.ids.set(key, id);
    if (bytes.length > 1)
      for (const a of caseVariants(bytes[keyAt]!, caseless))
        for (const b of caseVariants(bytes[keyAt + 1]!, caseless)) {
          const k = a | (b << 8);
          if (this.pairBucket[k] === 0) this.pairBucket[k] = this.buckets.push([]);
          this.buckets[this.pairBucket[k]! - 1]!.push(id);
        }
    return id;
  }

  /** Whether literal id occurs where its key pair was seen, at `pairAt`. */
  private matchesAt(bytes: Buffer, pairAt: number, id: number): boolean {
    const { bytes: literal, caseless, keyAt } = this.literals[id]!;
    const at = pairAt - keyAt;
    if (at < 0 || at + literal.length > bytes.length) return false;
    for (let j = 0; j < literal.length; j++) {
      const c = bytes[at + j]!;
      if ((caseless ? lower(c) : c) !== literal[j]) return false;
    }
    return true;
  }

  /** found[id] is 1 where literal id occurs in `bytes`. */
  find(bytes: Buffer): Uint8Array {
    const found = new Uint8Array(this.literals.length);
    this.literals.forEach(({ bytes: literal, caseless }, id) => {
      if (literal.length === 1 && caseVariants(literal[0]!, caseless).some((c) => bytes.includes(c))) found[id] = 1;
    });
    const pairBucket = this.pairBucket;
    const n = bytes.length;
    let previous = n > 0 ? bytes[0]! : 0;
    for (let i = 1; i < n; i++) {
      const c = bytes[i]!;
      const bucket = pairBucket[previous | (c << 8)]!;
      previous = c;
      if (bucket === 0) continue;
      for (const id of this.buckets[bucket - 1]!)
        if (found[id] === 0 && this.matchesAt(bytes, i - 1, id)) found[id] = 1;
    }
    return found;
  }
}

export interface LineSieve {
  /** Null when some pattern needs no literal at all: then every line has to be tested. */
  candidates(bytes: Buffer): CandidateLine[] | null;
}

/** A sieve for these patterns, built once (it reads every pattern's source, and throws there). */
export function lineSieve(patterns: readonly RegExp[]): LineSieve {
  const required = patterns.map((p) => requiredClauses(p));
  if (required.some((alternatives) => alternatives.length === 0)) return { candidates: () => null };

  const table = new LiteralTable();
  const perPattern: Alternative[][] = patterns.map((p, i) => {
    const caseless = p.flags.includes("i");
    return required[i]!.map((clauses) => {
      const best = bestClause(clauses)!;
      return {
        clauses,
        clauseIds: clauses.map((c) => c.map((literal) => table.id(literal, caseless))),
        caseless,
        finder: new RegExp(best.map(escapeLiteral).join("|"), caseless ? "gi" : "g"),
      };
    });
  });

  return {
    candidates(bytes) {
      const found = table.find(bytes);
      let text: string | undefined;
      let lowered: string | undefined;
      const lines = new Map<number, CandidateLine>();
      perPattern.forEach((alternatives, index) => {
        for (const alt of alternatives) {
          if (!alt.clauseIds.every((ids) => ids.some((id) => found[id] === 1))) continue;
          text ??= bytes.toString("latin1"); // one character per byte: offsets are byte offsets
          if (!holdsInOrder(alt.caseless ? (lowered ??= text.toLowerCase()) : text, alt.clauses)) continue;
          alt.finder.lastIndex = 0;
          for (let m = alt.finder.exec(text); m !== null; m = alt.finder.exec(text)) {
            const start = text.lastIndexOf("\n", m.index) + 1;
            const nl = text.indexOf("\n", m.index);
            const end = nl < 0 ? text.length : nl;
            const line = text.slice(start, end);
            if (holdsInOrder(alt.caseless ? line.toLowerCase() : line, alt.clauses)) {
              const entry = lines.get(start) ?? { start, end, patterns: [] };
              if (!entry.patterns.includes(index)) entry.patterns.push(index);
              lines.set(start, entry);
            }
            if (nl < 0) break;
            alt.finder.lastIndex = nl + 1;
          }
        }
      });
      const out = [...lines.values()].sort((a, b) => a.start - b.start);
      for (const line of out) line.patterns.sort((a, b) => a - b);
      return out;
    },
  };
}
