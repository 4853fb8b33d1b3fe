// The group a refusal is counted in (security-log refusal windows): the route pattern the
// request would reach, never its raw path, so a flood of unique paths is one count, not one
// row each. A path no row matches is `unrouted`; a method no row uses is `OTHER`.

/** The two fields of a route row the group is read from. */
export interface RoutePattern {
  method: string;
  path: string;
}

const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** How many literal segments of `pattern` match `path`, or null when it does not match (`:x` one segment, `*` the rest). */
function literalMatches(pattern: string, path: string): number | null {
  const want = pattern.split("/");
  const have = path.split("/");
  let literals = 0;
  for (let i = 0; i < want.length; i++) {
    const segment = want[i]!;
    if (segment === "*") return literals;
    if (i >= have.length) return null;
    if (segment.startsWith(":")) {
      if (have[i] === "") return null;
    } else if (segment === have[i]) {
      literals += 1;
    } else {
      return null;
    }
  }
  return want.length === have.length ? literals : null;
}

/** A refused request as the security log's subject: `<METHOD> <path>`, the path cut at 512 characters. */
export function refusalSubject(method: string, pathname: string): string {
  return `${method} ${pathname.slice(0, 512)}`;
}

/** `<METHOD> <pattern>` of the most specific row a path matches (the row itself when known), with the reason if given. */
export function refusalGroup(
  method: string,
  pathname: string,
  rows: ReadonlyArray<RoutePattern>,
  known: RoutePattern | null = null,
  reason?: string,
): string {
  const verb = KNOWN_METHODS.has(method) ? method : "OTHER";
  let best: { path: string; score: number } | null = known ? { path: known.path, score: Infinity } : null;
  if (best === null) {
    for (const row of rows) {
      const score = literalMatches(row.path, pathname);
      if (score === null) continue;
      const bonus = row.method === verb ? 0.5 : 0;
      if (best === null || score + bonus > best.score) best = { path: row.path, score: score + bonus };
    }
  }
  const pattern = best === null ? "unrouted" : best.path;
  return reason === undefined ? `${verb} ${pattern}` : `${verb} ${pattern} ${reason}`;
}
