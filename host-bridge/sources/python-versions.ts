// The part of PEP 440 `apps add pypi:` reads: final releases (1, 1.2, 1.2.3, ...) compared by their
// numbers, and the specifiers a Requires-Dist line uses (==, !=, >=, <=, >, <, ~=, ===, ==X.*).
// A pre-, post- or dev-release is never chosen for a range (pip's default too); an exact pin of
// one is matched as written. What this does not read is refused by the caller, never guessed.

/** A final release's numbers, or null for anything else (a pre-release, a local version...). */
export function releaseOf(version: string): number[] | null {
  return /^\d+(\.\d+)*$/.test(version) ? version.split(".").map(Number) : null;
}

export function compareReleases(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

const CLAUSE = /^(===|==|!=|~=|>=|<=|>|<)\s*([0-9][0-9A-Za-z.+!-]*(\.\*)?)$/;

/** True when `version` satisfies every clause of `specifier` ("" means any); null when a clause is not read. */
export function satisfies(version: string, specifier: string): boolean | null {
  const clauses = specifier
    .split(",")
    .map((c) => c.trim())
    .filter((c) => c !== "");
  const release = releaseOf(version);
  for (const clause of clauses) {
    const m = CLAUSE.exec(clause);
    if (!m) return null;
    const [, op, wanted] = m as unknown as [string, string, string];
    if (op === "===") {
      if (version !== wanted) return false;
      continue;
    }
    if (wanted.endsWith(".*")) {
      const prefix = releaseOf(wanted.slice(0, -2));
      if (!prefix || (op !== "==" && op !== "!=")) return null;
      const matches = release !== null && prefix.every((n, i) => (release[i] ?? 0) === n);
      if ((op === "==") !== matches) return false;
      continue;
    }
    const target = releaseOf(wanted);
    if (!target) {
      // Only an exact pin of a version this does not parse is read: as the same text.
      if (op === "==") {
        if (version !== wanted) return false;
        continue;
      }
      return null;
    }
    if (release === null) return false;
    const d = compareReleases(release, target);
    const ok =
      op === "=="
        ? d === 0
        : op === "!="
          ? d !== 0
          : op === ">="
            ? d >= 0
            : op === "<="
              ? d <= 0
              : op === ">"
                ? d > 0
                : op === "<"
                  ? d < 0
                  : // ~=X.Y: >= X.Y and the same X (all but the last number of the target).
                    target.length >= 2 && d >= 0 && target.slice(0, -1).every((n, i) => (release[i] ?? 0) === n);
    if (!ok) return false;
  }
  return true;
}

/** PEP 503's normalized project name: lower case, runs of -, _ and . as one -. */
export function normalizedProjectName(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, "-");
}
