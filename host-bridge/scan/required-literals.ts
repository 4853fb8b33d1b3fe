// The ASCII strings a pattern cannot match without, in the order a match holds them. The scan
// looks for them before it runs a pattern: in a file's raw bytes (line-sieve.ts), where an ASCII
// string sits exactly where it sits in the file's UTF-8 decoding (the decoder turns every ASCII
// byte into itself, ends any broken sequence at one, and never turns a non-ASCII byte into
// ASCII), and in decoded text before the reference patterns.
//
// The reading of a pattern is conservative: whatever it does not take as a plain literal (a
// class, an escape like \s, a lookaround, an optional or repeated-from-zero part) requires
// nothing, so every clause answered is one that every match really contains.

/** Every match contains at least one of these strings; lower-cased for a case-insensitive pattern. */
export type Clause = readonly string[];

interface Part {
  /**
   * Clauses every match of the part satisfies, in order: a match holds a string of each at
   * places that follow one another without overlapping.
   */
  clauses: Clause[];
  /** The one string the part always matches, when it has no other way to match. */
  exact: string | null;
}

const NOTHING: Part = { clauses: [], exact: null };
// Escapes of letters and digits stand for classes, assertions or code points, never themselves.
const OPAQUE_ESCAPES = new Set(["b", "B", "s", "S", "w", "W", "d", "D"]);

/** The better of two clauses: the one whose shortest string is longest (rarest), then the smaller. */
function better(a: Clause, b: Clause): Clause {
  const shortest = (c: Clause) => Math.min(...c.map((s) => s.length));
  if (shortest(a) !== shortest(b)) return shortest(a) > shortest(b) ? a : b;
  return a.length <= b.length ? a : b;
}

/** The clause least likely to hold by chance, to look for first; null when there is none. */
export function bestClause(clauses: readonly Clause[]): Clause | null {
  return clauses.length === 0 ? null : clauses.reduce(better);
}

class Reader {
  at = 0;
  constructor(
    private readonly source: string,
    private readonly caseless: boolean,
  ) {}

  private fail(why: string): never {
    throw new Error(`required literals: ${why} at ${this.at} in /${this.source}/`);
  }

  private peek(): string | undefined {
    return this.source[this.at];
  }

  /** The alternatives up to a closing parenthesis or the end. */
  alternatives(): Part[] {
    const alternatives = [this.sequence()];
    while (this.peek() === "|") {
      this.at++;
      alternatives.push(this.sequence());
    }
    return alternatives;
  }

  /** A group's alternatives as one part: a match contains the best clause of one of them. */
  private alternation(): Part {
    const alternatives = this.alternatives();
    if (alternatives.length === 1) return alternatives[0]!;
    const picked = alternatives.map((a) => bestClause(a.clauses));
    if (picked.some((c) => c === null)) return NOTHING;
    return { clauses: [[...new Set(picked.flatMap((c) => c!))]], exact: null };
  }

  private sequence(): Part {
    const clauses: Clause[] = [];
    let run = "";
    let onlyRun = true;
    const endRun = () => {
      if (run !== "") clauses.push([run]);
      run = "";
    };
    while (this.at < this.source.length && this.peek() !== "|" && this.peek() !== ")") {
      const atom = this.atom();
      const { min, max } = this.quantifier();
      if (min === 1 && max === 1 && atom.exact !== null) {
        run += atom.exact;
        continue;
      }
      onlyRun = false;
      endRun();
      if (min === 0) continue;
      // A repeated part: its clauses, in order, once (a literal character is its own clause).
      if (atom.clauses.length > 0) clauses.push(...atom.clauses);
      else if (atom.exact) clauses.push([atom.exact]);
    }
    const exact = onlyRun ? run : null;
    endRun();
    return { clauses, exact };
  }

  private atom(): Part {
    const c = this.source[this.at++]!;
    switch (c) {
      case "\\":
        return this.escape();
      case "(":
        return this.group();
      case "[":
        this.skipClass();
        return NOTHING;
      case ".":
      case "^":
      case "$":
        return NOTHING;
      case "*":
      case "+":
      case "?":
        return this.fail("a quantifier with nothing before it");
      default:
        return this.literal(c);
    }
  }

  private literal(c: string): Part {
    if (c.charCodeAt(0) >= 0x80 || c === "\n") return NOTHING;
    return { clauses: [], exact: this.caseless ? c.toLowerCase() : c };
  }

  private escape(): Part {
    const c = this.source[this.at++];
    if (c === undefined) return this.fail("a trailing backslash");
    if (OPAQUE_ESCAPES.has(c)) return NOTHING;
    if (/[A-Za-z0-9]/.test(c)) return this.fail(`an unsupported escape \\${c}`);
    return this.literal(c);
  }

  private group(): Part {
    if (this.source.startsWith("?:", this.at)) this.at += 2;
    else if (/^\?<?[=!]/.test(this.source.slice(this.at))) {
      // A lookaround consumes nothing: what it checks need not be where a clause looks.
      this.at += this.source[this.at + 1] === "<" ? 3 : 2;
      this.alternation();
      this.close();
      return NOTHING;
    } else if (this.peek() === "?") return this.fail("an unsupported group");
    const inner = this.alternation();
    this.close();
    return inner;
  }

  private close(): void {
    if (this.source[this.at++] !== ")") this.fail("an unclosed group");
  }

  private skipClass(): void {
    // Outside the u flag a class ends at its first unescaped ], even right after [ or [^.
    while (this.at < this.source.length && this.peek() !== "]") this.at += this.peek() === "\\" ? 2 : 1;
    if (this.source[this.at++] !== "]") this.fail("an unclosed class");
  }

  private quantifier(): { min: number; max: number } {
    const c = this.peek();
    let q: { min: number; max: number } | null = null;
    if (c === "*") q = { min: 0, max: Infinity };
    else if (c === "+") q = { min: 1, max: Infinity };
    else if (c === "?") q = { min: 0, max: 1 };
    if (q) this.at++;
    else {
      // Outside the u flag a brace that does not form a bound is a literal brace.
      const bound = /^\{(\d+)(,(\d*))?\}/.exec(this.source.slice(this.at));
      if (!bound) return { min: 1, max: 1 };
      this.at += bound[0].length;
      const min = Number(bound[1]);
      q = { min, max: bound[2] === undefined ? min : bound[3] === "" ? Infinity : Number(bound[3]) };
    }
    if (this.peek() === "?") this.at++; // lazy: the same strings match
    return q;
  }
}

/**
 * What every match of `pattern` contains: one list of clauses per top-level alternative, the
 * clauses of some one of them held in order. Empty when some alternative needs no literal at all.
 * Throws at load for syntax it does not read, so a new rule is never silently half-read.
 */
export function requiredClauses(pattern: RegExp): Clause[][] {
  if (/[uvsy]/.test(pattern.flags)) throw new Error(`required literals: flags ${pattern.flags} are not read`);
  const reader = new Reader(pattern.source, pattern.flags.includes("i"));
  const alternatives = reader.alternatives();
  if (reader.at !== pattern.source.length) throw new Error(`required literals: unbalanced ) in /${pattern.source}/`);
  return alternatives.some((a) => a.clauses.length === 0) ? [] : alternatives.map((a) => a.clauses);
}

/**
 * Whether `haystack` holds a string of each clause, one after another without overlapping, as
 * every match does. Taking for each clause the occurrence that ends first leaves the most room
 * for the rest, so one greedy pass decides. A caseless pattern's clauses are lower-cased: the
 * caller lower-cases the haystack (which turns no non-ASCII character into an ASCII one it lacked).
 */
export function holdsInOrder(haystack: string, clauses: readonly Clause[]): boolean {
  let from = 0;
  for (const clause of clauses) {
    let end = Infinity;
    for (const literal of clause) {
      const at = haystack.indexOf(literal, from);
      if (at >= 0 && at + literal.length < end) end = at + literal.length;
    }
    if (end === Infinity) return false;
    from = end;
  }
  return true;
}

/** A test that is false only for a text `pattern` cannot match anywhere in. */
export function couldMatch(pattern: RegExp): (text: string) => boolean {
  const alternatives = requiredClauses(pattern);
  if (alternatives.length === 0) return () => true;
  const caseless = pattern.flags.includes("i");
  return (text) => {
    const haystack = caseless ? text.toLowerCase() : text;
    return alternatives.some((clauses) => holdsInOrder(haystack, clauses));
  };
}
