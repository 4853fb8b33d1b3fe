// Tooling is never installed (INST-06): version-control metadata (its tools run what it names),
// bytecode the interpreter would run instead of the scanned source, and virtualenvs (the
// platform installs Python dependencies itself). Matched at any depth in any letter case.
export const NEVER_INSTALLED_NAMES: ReadonlySet<string> = new Set([
  ".git",
  ".hg",
  ".svn",
  "__pycache__",
  ".venv",
  "venv",
  ".tox",
]);

/** True when an entry with this name is left out of staging, the scan, the digest and the install. */
export function isNeverInstalled(name: string): boolean {
  return NEVER_INSTALLED_NAMES.has(name.toLowerCase());
}
